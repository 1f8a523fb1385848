/** Redis for the suites that need a real one. */
import type { Redis } from 'ioredis';
import { connectRedis } from '../src/rate-limit/redis.ts';

export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] || 'redis://127.0.0.1:6379';

/**
 * The Redis adapter needs a real Redis. Without one, CI fails (a skipped adapter would pass
 * unnoticed there); a developer's machine warns and skips it.
 */
export async function testRedis(): Promise<Redis | undefined> {
  const redis = connectRedis(TEST_REDIS_URL);
  try {
    await new Promise<void>((resolve, reject) => {
      if (redis.status === 'ready') return resolve();
      const timer = setTimeout(() => reject(new Error('no answer within 2 s')), 2_000);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    await redis.ping();
    return redis;
  } catch (error) {
    redis.disconnect();
    const message = `Redis at ${TEST_REDIS_URL} is not reachable (${(error as Error).message})`;
    if (process.env['CI']) throw new Error(`${message}; CI needs it (set TEST_TEST_REDIS_URL)`);
    process.emitWarning(`${message}: skipping the Redis rate-limiter tests`);
    return undefined;
  }
}
