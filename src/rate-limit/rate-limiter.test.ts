import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { testRedis } from '../../test/redis.ts';
import { MemoryRateLimiter } from './memory.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';
import { RedisRateLimiter } from './redis.ts';

rateLimiterContract({ name: 'memory', open: async () => new MemoryRateLimiter() });

// A prefix unique to this run, so parallel runs sharing one Redis never see each other's keys.
const prefix = `trackway-test:${randomUUID()}:`;
let cleanup: Redis | undefined;
rateLimiterContract({
  name: 'redis',
  async open() {
    const redis = await testRedis();
    if (!redis) return undefined;
    cleanup = redis.duplicate();
    cleanup.on('error', () => {});
    return new RedisRateLimiter(redis, { prefix });
  },
  async close() {
    if (!cleanup) return;
    const keys = await cleanup.keys(`${prefix}*`);
    if (keys.length > 0) await cleanup.del(...keys);
    cleanup.disconnect();
  },
});

describe('MemoryRateLimiter', () => {
  it('drops windows that have ended, so memory stays bounded', async () => {
    const limiter = new MemoryRateLimiter();
    const quotas = [{ window: 'minute', limit: 5 }] as const;
    for (let i = 0; i < 50; i++) {
      await limiter.consume(`acct_${i}`, quotas, new Date('2026-03-14T10:00:00Z'));
    }
    assert.equal(limiter.size, 50);
    await limiter.consume('acct_next', quotas, new Date('2026-03-14T10:01:00Z'));
    assert.equal(limiter.size, 1);
  });
});
