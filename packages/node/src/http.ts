/**
 * One HTTP exchange with retries. Which failures are retried is the caller's call (a retried
 * POST that creates something could create it twice); when to retry is decided here: a 429
 * after the `retry_after` the server names, a 5xx or network error after a jittered
 * exponential backoff, another 4xx never.
 */
import { TrackwayApiError, TrackwayNetworkError } from './errors.ts';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff step, doubled each retry. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface Exchange {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
}

export type Send = () => Promise<Response>;

/** Waits, resolving early never; a separate function so tests of the policy can read it. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * "Equal jitter": half the exponential step for sure, the other half random, so retries of many
 * clients spread out but none retries at once.
 */
export function backoffMs(retry: number, policy: RetryPolicy): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return step / 2 + Math.random() * (step / 2);
}

/** Seconds the server asked us to wait: the body's `retry_after`, else `Retry-After`, else 1. */
export function retryAfterMs(exchange: Exchange): number {
  const fromBody = (exchange.body as { retry_after?: unknown } | undefined)?.retry_after;
  const seconds =
    typeof fromBody === 'number' ? fromBody : Number(exchange.headers.get('retry-after') ?? 1);
  return Math.max(1, Number.isFinite(seconds) ? seconds : 1) * 1000;
}

async function readExchange(response: Response): Promise<Exchange> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body };
}

/**
 * Sends until an answer that is final for this request: 2xx, a 4xx other than 429, or a
 * retryable failure once retries are spent (then thrown). `retryServerErrors: false` retries
 * only 429, which the server answers before doing anything.
 */
export async function exchangeWithRetries(
  send: Send,
  policy: RetryPolicy,
  retryServerErrors: boolean,
): Promise<Exchange> {
  for (let retry = 0; ; retry++) {
    let exchange: Exchange;
    try {
      exchange = await readExchange(await send());
    } catch (error) {
      if (!retryServerErrors || retry >= policy.maxRetries) {
        throw new TrackwayNetworkError(`Request failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      await sleep(backoffMs(retry, policy));
      continue;
    }
    const { status } = exchange;
    if (status < 400) return exchange;
    const retryable = status === 429 || (retryServerErrors && status >= 500);
    if (!retryable || retry >= policy.maxRetries) {
      throw new TrackwayApiError(status, exchange.body as never);
    }
    await sleep(status === 429 ? retryAfterMs(exchange) : backoffMs(retry, policy));
  }
}
