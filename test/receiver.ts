/** A real local webhook receiver: records every request; its answers can be scripted. */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: {
    id: string;
    event: string;
    data: Record<string, unknown>;
    webhook_id: string;
    timestamp: string;
  };
  at: number;
}

export type Responder = (
  request: Received,
) => { status: number; headers?: Record<string, string>; body?: string | Buffer } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  respond: Responder;
  /** Resolves once `predicate` holds for what has been received (checked on every arrival). */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const waiters = new Set<() => void>();
  const hanging = new Set<import('node:http').ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    respond: () => ({ status: 200, body: 'ok' }),
    waitFor(predicate, timeoutMs = 20_000) {
      if (predicate(receiver.received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(receiver.received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `receiver: condition not met within ${timeoutMs} ms (${receiver.received.length} received)`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = {
        headers: req.headers,
        body,
        json: JSON.parse(body),
        at: Date.now(),
      };
      const answer = receiver.respond(entry);
      receiver.received.push(entry);
      for (const waiter of [...waiters]) waiter();
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}
