/**
 * A real HTTP hop between a client and the server that injects the faults of the shared
 * scenario into the client's stream of `POST /v1/track/batch` requests, by their order:
 *   - `dropAnswerOf`: forwarded, the server commits, then the client's socket is cut (the
 *     answer is lost; the client must resend and the server deduplicate);
 *   - `rateLimit`: answered 429 with `retry_after: 1` and not forwarded;
 *   - `killAt`: forwarded, and the server SIGKILLed while it handles it; it is restarted on the
 *     same store while the client retries.
 * Every batch is logged with its event ids, arrival time and what became of it.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface BatchSeen {
  n: number;
  at: number;
  ids: string[];
  outcome: 'dropped' | 'rate-limited' | 'killed' | 'forwarded' | 'upstream-down';
  /** The server's answer, when it gave one. */
  answer?: { accepted: number; deduplicated: number; rejected: number };
}

export interface FaultPlan {
  dropAnswerOf?: number;
  rateLimit?: number;
  killAt?: number;
  /** SIGKILLs the server; resolves once it is dead (the restart is the caller's). */
  kill?: () => Promise<void>;
}

export interface FaultProxy {
  url: string;
  batches: BatchSeen[];
  /** Starts a new run: forgets the log, arms `plan`. */
  arm(plan: FaultPlan): void;
  close(): void;
}

const FORWARDED = ['authorization', 'content-type', 'content-encoding', 'accept', 'user-agent'];

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function idsOf(body: Buffer, encoding: string | undefined): string[] {
  try {
    const json = JSON.parse((encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8')) as {
      events?: Array<{ event_id?: string }>;
    };
    return (json.events ?? []).map((e) => e.event_id ?? '');
  } catch {
    return [];
  }
}

export async function startFaultProxy(target: () => string): Promise<FaultProxy> {
  let plan: FaultPlan = {};
  const proxy: FaultProxy = {
    url: '',
    batches: [],
    arm(next) {
      plan = next;
      proxy.batches = [];
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };

  async function forward(req: IncomingMessage, body: Buffer) {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return fetch(`${target()}${req.url}`, {
      method: req.method!,
      headers,
      ...(body.length > 0 && { body }),
      signal: AbortSignal.timeout(30_000),
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const body = await readBody(req);
    const isBatch = req.method === 'POST' && req.url === '/v1/track/batch';
    const seen: BatchSeen | undefined = isBatch
      ? {
          n: proxy.batches.length + 1,
          at: performance.now(),
          ids: idsOf(body, req.headers['content-encoding']),
          outcome: 'forwarded',
        }
      : undefined;
    if (seen) proxy.batches.push(seen);
    if (seen && seen.n === plan.rateLimit) {
      seen.outcome = 'rate-limited';
      const answer = JSON.stringify({
        error: 'Rate limit exceeded',
        message: 'Rate limit exceeded: injected by the test proxy',
        retry_after: 1,
      });
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(answer);
      return;
    }
    let killing: Promise<void> | undefined;
    if (seen && seen.n === plan.killAt && plan.kill) {
      seen.outcome = 'killed';
      // Let the request reach the server, then kill it while it is being handled.
      const kill = plan.kill;
      killing = new Promise((resolve) => setTimeout(resolve, 5)).then(kill);
    }
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const answer = await forward(req, body);
      status = answer.status;
      retryAfter = answer.headers.get('retry-after');
      text = await answer.text();
    } catch {
      await killing;
      if (seen && seen.outcome === 'forwarded') seen.outcome = 'upstream-down';
      req.socket.destroy();
      return;
    }
    await killing;
    if (seen && status === 200) {
      try {
        const { accepted, deduplicated, rejected } = JSON.parse(text);
        seen.answer = { accepted, deduplicated, rejected };
      } catch {}
    }
    if (seen && (seen.n === plan.dropAnswerOf || seen.outcome === 'killed')) {
      if (seen.outcome !== 'killed') seen.outcome = 'dropped';
      req.socket.destroy();
      return;
    }
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(retryAfter && { 'retry-after': retryAfter }),
    });
    res.end(text);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
