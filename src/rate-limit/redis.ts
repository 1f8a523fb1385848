/**
 * The shared limiter: one Lua script checks every window of a key and increments them all only
 * if each has room, atomically in Redis, so the count is exact across any number of instances.
 * Window indices and lifetimes come from the caller's clock (not Redis TIME) so every adapter
 * places windows identically and tests can drive them; keys outlive their window by a minute to
 * absorb clock skew between instances, then expire.
 *
 * Calls for the same key and windows that arrive in one turn of the event loop share one group:
 * it admits the first `min(n, room)` of them and refuses the rest, exactly what n calls one
 * after another would do. And every group of the turn (one per account, but one per visitor for
 * browser events' per-IP limit, whose keys all differ) goes in the same script call, run group
 * after group as that many calls would be: one Redis command per loop turn rather than per key,
 * so neither ioredis (a command's encoding, promise and reply cost the service a few µs) nor
 * Redis (on a small machine, the service's CPU) pays per request.
 */
import { Redis, type Result } from 'ioredis';
import type { RateDecision, RateLimiter, RateQuota } from '../domain/ports/rate-limiter.ts';
import { windowIndex, windowResetAt } from './windows.ts';

// ARGV[1]: how many groups. Then per group: its n (how many windows), how many requests ask,
// the n limits, the n lifetimes in seconds; KEYS holds the groups' n counters in the same order.
// Each group admits as many of its requests as every one of its windows has room for, and
// increments each window by that; groups run in order, so a key in two groups sees the first's
// increments. Returns per group {admitted, count_1, …, count_n}, the counts as found before.
const CONSUME = `
local out = {}
local k = 0
local a = 2
for g = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  local admitted = tonumber(ARGV[a + 1])
  local counts = {}
  for i = 1, n do
    counts[i] = tonumber(redis.call('GET', KEYS[k + i]) or '0')
    local room = tonumber(ARGV[a + 1 + i]) - counts[i]
    if room < admitted then admitted = room end
  end
  if admitted < 0 then admitted = 0 end
  if admitted > 0 then
    for i = 1, n do
      if redis.call('INCRBY', KEYS[k + i], admitted) == admitted then
        redis.call('EXPIRE', KEYS[k + i], ARGV[a + 1 + n + i])
      end
    end
  end
  out[#out + 1] = admitted
  for i = 1, n do out[#out + 1] = counts[i] end
  k = k + n
  a = a + 2 + 2 * n
end
return out
`;

/**
 * Groups one script call takes at most: a script blocks Redis while it runs, so a turn with
 * more groups than this (a flood of visitors) is split into several calls.
 */
const MAX_GROUPS_PER_CALL = 500;

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
 * Which Redis a message is about, as `host:port` (ioredis's default port when the URL has
 * none): an operator with several Redis servers must know which one failed. Never the URL
 * itself, which may carry a user and password.
 */
export function redisTarget(url: string): string {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port || '6379'}`;
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

/** Calls waiting for one script call: same key, windows and limits, in arrival order. */
interface PendingConsume {
  quotas: readonly RateQuota[];
  /** Each quota's window index, as found by the first call. */
  indices: number[];
  /** The first call's clock, in whole seconds: the keys' lifetimes count from it. */
  nowSeconds: number;
  waiters: Array<{ resolve(decision: RateDecision): void; reject(error: unknown): void }>;
}

/** The same windows (same indices) with the same limits: the very same script call. */
function sameCall(group: PendingConsume, quotas: readonly RateQuota[], nowMs: number): boolean {
  if (group.quotas.length !== quotas.length) return false;
  for (let i = 0; i < quotas.length; i++) {
    const mine = quotas[i]!;
    const theirs = group.quotas[i]!;
    if (
      mine.window !== theirs.window ||
      mine.limit !== theirs.limit ||
      windowIndex(mine.window, nowMs) !== group.indices[i]
    ) {
      return false;
    }
  }
  return true;
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;
  /**
   * By key: the calls of this loop turn, usually one group per key. A call that joins one only
   * compares numbers; the Redis keys' names are built once per group, when it is sent.
   */
  #pending = new Map<string, PendingConsume[]>();
  #scheduled = false;

  constructor(redis: Redis, options: { prefix?: string } = {}) {
    this.#redis = redis;
    this.#prefix = options.prefix ?? 'trackway:rl:';
    redis.defineCommand('trackwayRateConsume', { lua: CONSUME });
  }

  consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision> {
    const nowMs = now.getTime();
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      let groups = this.#pending.get(key);
      if (groups === undefined) {
        groups = [];
        this.#pending.set(key, groups);
      } else {
        for (const group of groups) {
          if (sameCall(group, quotas, nowMs)) {
            group.waiters.push(waiter);
            return;
          }
        }
      }
      groups.push({
        quotas,
        indices: quotas.map((quota) => windowIndex(quota.window, nowMs)),
        nowSeconds: Math.floor(nowMs / 1000),
        waiters: [waiter],
      });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const pending = this.#pending;
    this.#pending = new Map();
    this.#scheduled = false;
    let call: Array<[string, PendingConsume]> = [];
    for (const [key, groups] of pending) {
      for (const group of groups) {
        call.push([key, group]);
        if (call.length === MAX_GROUPS_PER_CALL) {
          void this.#consumeGroups(call);
          call = [];
        }
      }
    }
    if (call.length > 0) void this.#consumeGroups(call);
  }

  async #consumeGroups(groups: Array<[string, PendingConsume]>): Promise<void> {
    const keys: string[] = [];
    const args: number[] = [groups.length];
    const resets: number[][] = [];
    for (const [key, { quotas, indices, nowSeconds, waiters }] of groups) {
      const limits: number[] = [];
      const lifetimes: number[] = [];
      const groupResets: number[] = [];
      quotas.forEach((quota, i) => {
        const resetAt = windowResetAt(quota.window, indices[i]!);
        keys.push(`${this.#prefix}${key}:${quota.window}:${indices[i]}`);
        limits.push(quota.limit);
        lifetimes.push(resetAt - nowSeconds + KEY_GRACE_SECONDS);
        groupResets.push(resetAt);
      });
      args.push(quotas.length, waiters.length, ...limits, ...lifetimes);
      resets.push(groupResets);
    }
    let reply: number[];
    try {
      reply = await this.#redis.trackwayRateConsume(keys.length, ...keys, ...args);
    } catch (error) {
      for (const [, { waiters }] of groups) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    let at = 0;
    groups.forEach(([, { quotas, waiters }], g) => {
      const admitted = Number(reply[at]);
      const counts = quotas.map((_, i) => Number(reply[at + 1 + i]));
      at += 1 + quotas.length;
      waiters.forEach((waiter, position) => {
        const allowed = position < admitted;
        // What this call would have seen alone, in its place in the queue: its own increment
        // when admitted, everything admitted before it when refused.
        const taken = allowed ? position + 1 : admitted;
        waiter.resolve({
          allowed,
          windows: quotas.map((quota, i) => ({
            window: quota.window,
            limit: quota.limit,
            remaining: Math.max(0, quota.limit - counts[i]! - taken),
            resetAt: resets[g]![i]!,
          })),
        });
      });
    });
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
