/**
 * The plumbing the local platform servers share: a real node:http server on a free port that
 * records every request, can be switched to answer 5xx or to hang, and closes cleanly even
 * with requests left hanging.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** `normal`: honour the platform's contract; `down`: answer 5xx; `hang`: never answer. */
export type ServerMode = 'normal' | 'down' | 'hang';

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface PlatformServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  mode: ServerMode;
  /** Never answer the requests this picks (one destination hanging, another served). */
  hangIf?: (request: ReceivedRequest) => boolean;
  /**
   * Accept the requests this picks (the platform keeps their events, as it would have) but hold
   * the answer back: the sender is left between "the platform has it" and "we know it", where a
   * crash must lead to a resend. Held requests are listed in `held`.
   */
  holdIf?: (request: ReceivedRequest) => boolean;
  held: ReceivedRequest[];
  /** Hanging or held requests whose sender is still connected, waiting for the answer. */
  inFlight(): number;
  /** Cuts the connections of hanging and held requests (their senders see a network error). */
  release(): void;
  requests: ReceivedRequest[];
  /** Resolves once `predicate` holds after a request; rejects after `timeoutMs` (a test never hangs). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const MAX_BODY = 8 * 1024 * 1024;

export async function startPlatformServer(
  handle: (request: ReceivedRequest, server: PlatformServer) => Answer,
  down: () => Answer,
): Promise<PlatformServer> {
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  const holding = new Set<ServerResponse>();
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://local');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const request: ReceivedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        json,
      };
      platform.requests.push(request);
      for (const wake of waiters) wake();
      if (platform.mode === 'hang' || platform.hangIf?.(request)) {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const answer = platform.mode === 'down' ? down() : handle(request, platform);
      if (platform.holdIf?.(request)) {
        platform.held.push(request);
        holding.add(res);
        res.on('close', () => holding.delete(res));
        for (const wake of waiters) wake();
        return;
      }
      const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status, {
        ...(text ? { 'content-type': 'application/json' } : {}),
        ...answer.headers,
      });
      res.end(text);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const platform: PlatformServer = {
    origin: `http://127.0.0.1:${port}`,
    mode: 'normal',
    requests: [],
    held: [],
    inFlight: () => hanging.size + holding.size,
    release() {
      for (const res of [...hanging, ...holding]) res.destroy();
    },
    waitFor(predicate, timeoutMs = 30_000) {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`the platform stand-in waited ${timeoutMs} ms in vain`));
        }, timeoutMs);
        const wake = () => {
          if (!predicate()) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        };
        waiters.add(wake);
      });
    },
    async close() {
      for (const res of [...hanging, ...holding]) res.destroy();
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
  return platform;
}

export function isSha256Hex(value: unknown): boolean {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}
