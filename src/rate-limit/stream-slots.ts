/**
 * Live-tail streams an account may hold open at once (contract §21: 20), counted across
 * instances in Redis when it is configured, else in this process. In Redis each open stream is
 * a member of the account's sorted set, scored by when it expires unless renewed: an instance
 * that dies without closing its streams frees their slots within STREAM_SLOT_TTL_MS.
 */
import type { Redis } from 'ioredis';

export const STREAMS_PER_ACCOUNT = 20;
/** A slot not renewed for this long is free again (its instance died). */
export const STREAM_SLOT_TTL_MS = 30_000;

export interface StreamSlots {
  /** Takes a slot for the stream, or answers false when the account holds them all. */
  acquire(accountId: string, streamId: string): Promise<boolean>;
  release(accountId: string, streamId: string): void;
  /** Keeps the slots of streams still open (called every few seconds). */
  renew(open: Array<{ accountId: string; streamId: string }>): void;
}

export class MemoryStreamSlots implements StreamSlots {
  private readonly byAccount = new Map<string, Set<string>>();

  constructor(private readonly limit = STREAMS_PER_ACCOUNT) {}

  async acquire(accountId: string, streamId: string): Promise<boolean> {
    const open = this.byAccount.get(accountId) ?? new Set<string>();
    if (open.size >= this.limit) return false;
    open.add(streamId);
    this.byAccount.set(accountId, open);
    return true;
  }

  release(accountId: string, streamId: string): void {
    const open = this.byAccount.get(accountId);
    if (!open) return;
    open.delete(streamId);
    if (open.size === 0) this.byAccount.delete(accountId);
  }

  renew(): void {}
}

/** Drops expired members, then adds the stream if the account has room: one atomic step. */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

type SlotRedis = Redis & {
  trackwayStreamAcquire(
    key: string,
    now: number,
    expires: number,
    limit: number,
    member: string,
    ttl: number,
  ): Promise<number>;
};

/**
 * Shared by every instance on one Redis. While Redis does not answer, streams are counted in
 * this process instead (as the rate limiter fails open): a live tail is never refused for an
 * outage of the counter.
 */
export class RedisStreamSlots implements StreamSlots {
  private readonly redis: SlotRedis;
  private readonly local: MemoryStreamSlots;
  /** Streams counted locally because Redis failed when they opened. */
  private readonly fallback = new Set<string>();

  constructor(
    redis: Redis,
    private readonly onError: (error: unknown) => void,
    private readonly limit = STREAMS_PER_ACCOUNT,
  ) {
    redis.defineCommand('trackwayStreamAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    this.redis = redis as SlotRedis;
    this.local = new MemoryStreamSlots(limit);
  }

  private key(accountId: string): string {
    return `trackway:live-tail:${accountId}`;
  }

  async acquire(accountId: string, streamId: string): Promise<boolean> {
    const now = Date.now();
    try {
      const taken = await this.redis.trackwayStreamAcquire(
        this.key(accountId),
        now,
        now + STREAM_SLOT_TTL_MS,
        this.limit,
        streamId,
        STREAM_SLOT_TTL_MS * 2,
      );
      return taken === 1;
    } catch (error) {
      this.onError(error);
      this.fallback.add(streamId);
      return this.local.acquire(accountId, streamId);
    }
  }

  release(accountId: string, streamId: string): void {
    if (this.fallback.delete(streamId)) {
      this.local.release(accountId, streamId);
      return;
    }
    // Lost (Redis down): the slot expires on its own.
    this.redis.zrem(this.key(accountId), streamId).catch(() => {});
  }

  renew(open: Array<{ accountId: string; streamId: string }>): void {
    const expires = Date.now() + STREAM_SLOT_TTL_MS;
    for (const { accountId, streamId } of open) {
      if (this.fallback.has(streamId)) continue;
      // XX: only a member still there (a slot already expired stays free).
      this.redis.zadd(this.key(accountId), 'XX', expires, streamId).catch(() => {});
    }
  }
}
