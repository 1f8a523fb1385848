/** The fallback gauge follows the fail-open limiter's state, against real Redis connections. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { freePort, testRedis } from '../../test/redis.ts';
import { loadConfig } from '../config.ts';
import { createMetrics } from '../http/metrics.ts';
import { createLogger } from '../logger.ts';
import { createRateLimiter } from '../main.ts';
import { FailOpenRateLimiter } from './fail-open.ts';
import { MemoryRateLimiter } from './memory.ts';
import { connectRedis, RedisRateLimiter, redisTarget } from './redis.ts';

const quotas = [{ window: 'minute' as const, limit: 10 }];
const logger = createLogger('silent');
const fallback = async (metrics: ReturnType<typeof createMetrics>) =>
  (await metrics.rateLimitFallback.get()).values[0]?.value;

describe('trackway_rate_limit_fallback', () => {
  const closing: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closing) await close();
  });

  it('is 1 while Redis refuses and rate limits run in memory', async () => {
    const metrics = createMetrics();
    const nobody = connectRedis(`redis://127.0.0.1:${await freePort()}`);
    const limiter = new FailOpenRateLimiter(
      new RedisRateLimiter(nobody),
      new MemoryRateLimiter(),
      logger,
      { fallback: metrics.rateLimitFallback },
    );
    closing.push(() => limiter.close());
    assert.equal(await fallback(metrics), 0);
    const decision = await limiter.consume('acct_x', quotas, new Date());
    assert.equal(decision.allowed, true, 'fails open');
    assert.equal(await fallback(metrics), 1);
  });

  it('starts at 1 when Redis was not there at start, and drops to 0 once it answers', async (t) => {
    const redis = await testRedis();
    if (!redis) return t.skip('Redis is not reachable');
    const metrics = createMetrics();
    const limiter = new FailOpenRateLimiter(
      new RedisRateLimiter(redis),
      new MemoryRateLimiter(),
      logger,
      { degraded: true, fallback: metrics.rateLimitFallback },
    );
    closing.push(() => limiter.close());
    assert.equal(await fallback(metrics), 1);
    await limiter.consume(`acct_${Date.now()}`, quotas, new Date());
    assert.equal(await fallback(metrics), 0);
  });
});

describe('Redis warnings (issue 30)', () => {
  function capture() {
    let text = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        text += chunk;
        done();
      },
    });
    return { logger: createLogger('info', sink), text: () => text };
  }

  it('name the Redis as host:port, never its credentials, at start and when it goes away', async () => {
    const port = await freePort();
    const url = `redis://trackway:s3cretpw@127.0.0.1:${port}/2`;
    assert.equal(redisTarget(url), `127.0.0.1:${port}`);
    assert.equal(redisTarget('rediss://cache.internal'), 'cache.internal:6379');

    const start = capture();
    const limiter = await createRateLimiter(
      loadConfig({ REDIS_URL: url, DATABASE_URL: 'sqlite::memory:' }),
      start.logger,
    );
    try {
      assert.match(
        start.text(),
        new RegExp(`"Redis at 127\\.0\\.0\\.1:${port} not reachable at start`),
      );
    } finally {
      await limiter?.close();
    }

    const running = capture();
    const nobody = connectRedis(url);
    const failOpen = new FailOpenRateLimiter(
      new RedisRateLimiter(nobody),
      new MemoryRateLimiter(),
      running.logger,
      { target: redisTarget(url) },
    );
    try {
      await failOpen.consume('acct_x', quotas, new Date());
      assert.match(running.text(), new RegExp(`"Redis at 127\\.0\\.0\\.1:${port} unreachable: `));
    } finally {
      await failOpen.close();
    }
    for (const text of [start.text(), running.text()]) {
      assert.ok(!text.includes('s3cretpw') && !text.includes('trackway:'), text);
    }
  });
});
