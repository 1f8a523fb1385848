/**
 * Sends forwarding requests to the ad platforms with undici. The base URLs are the operator's
 * (TRACKWAY_META_API_URL …), so the webhooks' SSRF rules do not apply. Connect within 5 s,
 * whole exchange within the request timeout (15 s by default); each platform origin gets its
 * own connection pool, so a hanging platform holds only its own sockets.
 */
import { Agent, request } from 'undici';
import { type PlatformRequest, requestUrl } from '../domain/forwarding/model.ts';
import type { PlatformAnswer } from '../domain/forwarding/platform-response.ts';
import type { Platform } from '../domain/forwarding/platforms/registry.ts';
import type { PlatformGateway } from '../domain/ports.ts';

/** The most of an answer read: classifiers parse the error body; the ledger keeps 1 KB. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface PlatformSender {
  send(
    url: string,
    platformRequest: PlatformRequest,
  ): Promise<{ answer: PlatformAnswer; durationMs: number }>;
  close(): Promise<void>;
}

/** The request's body as sent (its own function, so a CPU profile can tell it apart). */
function serialize(platformRequest: PlatformRequest): string {
  return JSON.stringify(platformRequest.body);
}

export function createPlatformSender(options: { timeoutMs?: number } = {}): PlatformSender {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const agent = new Agent({
    connect: { timeout: 5_000 },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 16,
  });
  return {
    async send(url, platformRequest) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const res = await request(url, {
          method: platformRequest.method,
          headers: platformRequest.headers,
          body: serialize(platformRequest),
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size >= MAX_ANSWER_BYTES) break;
        }
        if (size >= MAX_ANSWER_BYTES) res.body.destroy();
        const retryAfter = res.headers['retry-after'];
        return {
          answer: {
            kind: 'response',
            status: res.statusCode,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          },
          durationMs: elapsed(),
        };
      } catch (error) {
        const e = error as Error & { code?: string; cause?: Error & { code?: string } };
        // Never the URL: Meta's carries the access token in its query string.
        const message =
          e.name === 'TimeoutError'
            ? `Timed out after ${timeoutMs / 1000} s`
            : (e.cause?.code ?? e.code ?? e.cause?.message ?? e.message);
        return { answer: { kind: 'network', message }, durationMs: elapsed() };
      }
    },
    close: () => agent.close(),
  };
}

/** A sender bound to the platforms' base URLs: what the test-send route uses. */
export function createPlatformGateway(
  baseUrls: Record<Platform, string>,
  sender: PlatformSender = createPlatformSender(),
): PlatformGateway & { close(): Promise<void> } {
  return {
    send: (platform, platformRequest) =>
      sender.send(requestUrl(baseUrls[platform], platformRequest), platformRequest),
    close: () => sender.close(),
  };
}
