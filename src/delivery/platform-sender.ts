/**
 * Sends forwarding requests to the ad platforms with undici. The base URLs are the operator's
 * (TRACKWAY_META_API_URL …), so the webhooks' SSRF rules do not apply. Connect within 5 s,
 * whole exchange within the request timeout (15 s by default); each platform origin gets its
 * own connection pool, so a hanging platform holds only its own sockets.
 */
import { Agent, request } from 'undici';
import { type PlatformRequest, requestUrl } from '../domain/forwarding/model.ts';
import type { PlatformAnswer, Verdict } from '../domain/forwarding/platform-response.ts';
import { type Platform, platformModule } from '../domain/forwarding/platforms/registry.ts';
import type { PlatformGateway, SentRequest } from '../domain/ports/platform-gateway.ts';
import { type AccessTokens, createAccessTokens, type TokenOutcome } from './access-tokens.ts';

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

/** A token that could not be had, as the answer the ledger keeps and the verdict it makes. */
function tokenFailure(failure: Exclude<TokenOutcome, { kind: 'token' }>, durationMs: number) {
  const verdict: Verdict =
    failure.kind === 'refused'
      ? { kind: 'auth', message: failure.message }
      : { kind: 'transient', message: failure.message };
  const answer: PlatformAnswer =
    failure.status === null
      ? { kind: 'network', message: failure.message }
      : { kind: 'response', status: failure.status, body: failure.message };
  return { answer, durationMs, verdict };
}

/**
 * Sends one request to its platform; for a platform whose module declares `auth`, with the
 * destination's access token, renewed and sent once more after a 401 (the token may have been
 * revoked or expired early). A grant the provider refuses comes back as an `auth` verdict (the
 * destination is suspended), a token that could not be had now as a `transient` one.
 */
export async function sendAuthorized(
  sender: PlatformSender,
  tokens: AccessTokens,
  platform: Platform,
  config: Record<string, unknown>,
  url: string,
  platformRequest: PlatformRequest,
): Promise<SentRequest> {
  if (!platformModule(platform).auth) return sender.send(url, platformRequest);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const withToken = (token: string) =>
    sender.send(url, {
      ...platformRequest,
      headers: { ...platformRequest.headers, authorization: `Bearer ${token}` },
    });
  let got = await tokens.token(platform, config);
  if (got.kind !== 'token') return tokenFailure(got, elapsed());
  let sent = await withToken(got.token);
  if (sent.answer.kind === 'response' && sent.answer.status === 401) {
    got = await tokens.token(platform, config, got.token);
    if (got.kind !== 'token') return tokenFailure(got, elapsed());
    sent = await withToken(got.token);
  }
  return { ...sent, durationMs: elapsed() };
}

/** A sender bound to the platforms' base URLs: what the test-send route uses. */
export function createPlatformGateway(
  baseUrls: Record<Platform, string>,
  sender: PlatformSender = createPlatformSender(),
  tokens: AccessTokens = createAccessTokens(),
): PlatformGateway & { close(): Promise<void> } {
  return {
    send: (platform, platformRequest, config) =>
      sendAuthorized(
        sender,
        tokens,
        platform,
        config,
        requestUrl(baseUrls[platform], platformRequest),
        platformRequest,
      ),
    close: async () => {
      await sender.close();
      await tokens.close();
    },
  };
}
