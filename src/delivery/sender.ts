/**
 * Sends one webhook attempt over HTTP with undici: connect within 5 s, whole exchange within
 * 15 s, redirects not followed (a 3xx is a failure), and the socket's own DNS lookup guarded
 * against private destinations (no rebinding gap between check and connect).
 */
import { Agent, request } from 'undici';
import { RESPONSE_EXCERPT_BYTES, responseExcerpt } from '../domain/webhooks/response-excerpt.ts';
import { PER_ENDPOINT_IN_FLIGHT } from './in-flight.ts';
import { type DestinationPolicy, guardedLookup, refusedAtConnect } from './ssrf.ts';

export interface SendResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The first 1 KB of the response, as storable text (responseExcerpt). */
  responseBody: string | null;
  retryAfter: string | undefined;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult>;
  close(): Promise<void>;
}

export function createSender(
  policy: DestinationPolicy,
  timeouts: { connectMs: number; totalMs: number } = { connectMs: 5_000, totalMs: 15_000 },
): Sender {
  const agent = new Agent({
    connect: { timeout: timeouts.connectMs, lookup: guardedLookup(policy) as never },
    headersTimeout: timeouts.totalMs,
    bodyTimeout: timeouts.totalMs,
    // Sockets per origin: as many as the worker keeps open to one endpoint, so its cap is the
    // one that binds and one slow origin holds no more than that.
    connections: PER_ENDPOINT_IN_FLIGHT,
  });
  return {
    async send(url, headers, body) {
      const started = performance.now();
      const refused = refusedAtConnect(url, policy);
      if (refused !== null) {
        return {
          statusCode: null,
          durationMs: 0,
          error: `ESSRF: ${refused}`,
          responseBody: null,
          retryAfter: undefined,
        };
      }
      try {
        const res = await request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
          signal: AbortSignal.timeout(timeouts.totalMs),
        });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size >= RESPONSE_EXCERPT_BYTES) break;
        }
        if (size >= RESPONSE_EXCERPT_BYTES) res.body.destroy();
        const text = responseExcerpt(Buffer.concat(chunks));
        const retryAfter = res.headers['retry-after'];
        return {
          statusCode: res.statusCode,
          durationMs: Math.round(performance.now() - started),
          error: res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`,
          responseBody: text,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        };
      } catch (error) {
        const e = error as Error & { code?: string; cause?: Error & { code?: string } };
        // A timeout is an AbortSignal's DOMException, whose numeric `code` (23) means nothing
        // to the reader of the attempt log.
        const timedOut = e.name === 'TimeoutError';
        const code = timedOut ? undefined : (e.cause?.code ?? e.code);
        const reason = timedOut
          ? `Timed out after ${timeouts.totalMs / 1000} s`
          : (e.cause?.message ?? e.message);
        return {
          statusCode: null,
          durationMs: Math.round(performance.now() - started),
          error: code && !reason.includes(code) ? `${code}: ${reason}` : reason,
          responseBody: null,
          retryAfter: undefined,
        };
      }
    },
    close: () => agent.close(),
  };
}
