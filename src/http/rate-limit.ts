/**
 * Rate limits as HTTP sees them (contract §7): the per-account quotas of every authenticated
 * request with their headers, and the per-IP ceiling on failed authentications. The counting
 * itself is the RateLimiter port's.
 */
import type { FastifyReply } from 'fastify';
import { effectiveLimits } from '../domain/accounts/accounts.ts';
import { RateLimitedError, type TrackwayError } from '../domain/errors.ts';
import type { Account } from '../domain/model.ts';
import type {
  RateDecision,
  RateLimiter,
  RateQuota,
  RateWindowState,
} from '../domain/ports/rate-limiter.ts';
import { RATE_WINDOW_SECONDS } from '../domain/ports/rate-limiter.ts';

/** Failed authentications one client IP may make per UTC minute before it gets 429s. */
export const AUTH_FAILURES_PER_MINUTE = 20;
const AUTH_FAILURE_QUOTA: readonly RateQuota[] = [
  { window: 'minute', limit: AUTH_FAILURES_PER_MINUTE },
];

/** Whole seconds until the window resets, at least 1 (what `retry_after` and `t=` carry). */
function secondsUntil(state: RateWindowState, nowMs: number): number {
  return Math.max(1, Math.ceil(state.resetAt - nowMs / 1000));
}

/**
 * The window the X-RateLimit-* headers describe: the minute, unless the day has less room left
 * or is the one refusing. When both refuse, the day's reset is the real wait.
 */
export function bindingWindow(decision: RateDecision): RateWindowState {
  const [minute, day] = decision.windows as [RateWindowState, RateWindowState];
  if (!decision.allowed) return day.remaining === 0 ? day : minute;
  return day.remaining < minute.remaining ? day : minute;
}

/**
 * Counts the request against its account's minute and day and writes the headers; throws the
 * 429 when either is full. Limits are read from the account loaded for this very request, so a
 * plan change applies to the next request on every instance, and windows are keyed by account
 * alone, so it does not reset them.
 */
export async function limitAccount(
  limiter: RateLimiter,
  account: Account,
  now: Date,
  reply: FastifyReply,
): Promise<void> {
  const limits = effectiveLimits(account);
  const decision = await limiter.consume(
    `acct:${account.id}`,
    [
      { window: 'minute', limit: limits.requestsPerMinute },
      { window: 'day', limit: limits.dailyLimit },
    ],
    now,
  );
  const nowMs = now.getTime();
  const binding = bindingWindow(decision);
  const [minute, day] = decision.windows as [RateWindowState, RateWindowState];
  reply.headers({
    'x-ratelimit-limit': binding.limit,
    'x-ratelimit-remaining': binding.remaining,
    'x-ratelimit-reset': binding.resetAt,
    // draft-ietf-httpapi-ratelimit-headers-10: one List member per policy (quota q, window w)
    // and the live state of each (remaining r, seconds to reset t).
    'ratelimit-policy': `"minute";q=${minute.limit};w=${RATE_WINDOW_SECONDS.minute}, "day";q=${day.limit};w=${RATE_WINDOW_SECONDS.day}`,
    ratelimit: `"minute";r=${minute.remaining};t=${secondsUntil(minute, nowMs)}, "day";r=${day.remaining};t=${secondsUntil(day, nowMs)}`,
  });
  if (!decision.allowed) throw new RateLimitedError(secondsUntil(binding, nowMs));
}

/**
 * A failed authentication counts against the client IP's minute. The first 20 are answered
 * with the 401 itself; later ones, until the minute ends, with 429. Valid keys never reach
 * here, so they are served whatever their IP did.
 */
export async function limitAuthFailure(
  limiter: RateLimiter,
  ip: string,
  now: Date,
  failure: TrackwayError,
): Promise<TrackwayError> {
  const decision = await limiter.consume(`authfail:${ip}`, AUTH_FAILURE_QUOTA, now);
  if (decision.allowed) return failure;
  return new RateLimitedError(secondsUntil(decision.windows[0]!, now.getTime()));
}
