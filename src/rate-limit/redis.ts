/**
 * The shared limiter: one Lua script checks every window of a key and increments them all only
 * if each has room, atomically in Redis, so the count is exact across any number of instances.
 * Window indices and lifetimes come from the caller's clock (not Redis TIME) so every adapter
 * places windows identically and tests can drive them; keys outlive their window by a minute to
 * absorb clock skew between instances, then expire.
 */
import { Redis, type Result } from 'ioredis';
import type { RateDecision, RateLimiter, RateQuota } from '../domain/ports.ts';
import { windowIndex, windowResetAt } from './windows.ts';

// KEYS: one counter per window. ARGV: the n limits, then the n lifetimes in seconds.
// Returns {allowed (1|0), count_1, …, count_n}: counts after the increment when admitted, as
// found when refused (a refusal increments nothing).
const CONSUME = `
local n = #KEYS
local counts = {}
local allowed = 1
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] >= tonumber(ARGV[i]) then allowed = 0 end
end
if allowed == 1 then
  for i = 1, n do
    counts[i] = redis.call('INCR', KEYS[i])
    if counts[i] == 1 then redis.call('EXPIRE', KEYS[i], ARGV[n + i]) end
  end
end
table.insert(counts, 1, allowed)
return counts
`;

/** How long a key outlives its window, against clock skew between instances. */
const KEY_GRACE_SECONDS = 60;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    trackwayRateConsume(
      numberOfKeys: number,
      ...keysAndArgs: Array<string | number>
    ): Result<number[], Context>;
  }
}

/**
 * A connection that never makes a request wait for Redis: no offline queue (a command while
 * disconnected fails at once, and the caller falls back), no resend after a reconnect, a short
 * connect and command timeout. ioredis keeps reconnecting in the background.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  // Failures surface as rejected commands, which the fail-open limiter logs once; without a
  // listener ioredis would print every reconnect error to stderr.
  redis.on('error', () => {});
  return redis;
}

/**
 * Resolves `true` once the connection is ready, `false` after `ms` without it. Startup waits
 * this long so the first requests are counted in Redis rather than needlessly falling back.
 */
export function redisReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, ms);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, options: { prefix?: string } = {}) {
    this.#redis = redis;
    this.#prefix = options.prefix ?? 'trackway:rl:';
    redis.defineCommand('trackwayRateConsume', { lua: CONSUME });
  }

  async consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision> {
    const nowMs = now.getTime();
    const nowSeconds = Math.floor(nowMs / 1000);
    const keys: string[] = [];
    const limits: number[] = [];
    const lifetimes: number[] = [];
    const resets: number[] = [];
    for (const quota of quotas) {
      const index = windowIndex(quota.window, nowMs);
      const resetAt = windowResetAt(quota.window, index);
      keys.push(`${this.#prefix}${key}:${quota.window}:${index}`);
      limits.push(quota.limit);
      lifetimes.push(resetAt - nowSeconds + KEY_GRACE_SECONDS);
      resets.push(resetAt);
    }
    const reply = await this.#redis.trackwayRateConsume(
      keys.length,
      ...keys,
      ...limits,
      ...lifetimes,
    );
    return {
      allowed: reply[0] === 1,
      windows: quotas.map((quota, i) => ({
        window: quota.window,
        limit: quota.limit,
        remaining: Math.max(0, quota.limit - Number(reply[i + 1])),
        resetAt: resets[i]!,
      })),
    };
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
