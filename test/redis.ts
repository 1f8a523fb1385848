/** Redis for the suites that need a real one. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import type { Redis } from 'ioredis';
import { connectRedis, redisReady } from '../src/rate-limit/redis.ts';

export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] || 'redis://127.0.0.1:6379';

/**
 * The Redis adapter needs a real Redis. Without one, CI fails (a skipped adapter would pass
 * unnoticed there); a developer's machine warns and skips it.
 */
export async function testRedis(): Promise<Redis | undefined> {
  const redis = connectRedis(TEST_REDIS_URL);
  try {
    if (!(await redisReady(redis, 2_000))) throw new Error('no answer within 2 s');
    await redis.ping();
    return redis;
  } catch (error) {
    redis.disconnect();
    const message = `Redis at ${TEST_REDIS_URL} is not reachable (${(error as Error).message})`;
    if (process.env['CI']) throw new Error(`${message}; CI needs it (set TEST_REDIS_URL)`);
    process.emitWarning(`${message}: skipping the Redis rate-limiter tests`);
    return undefined;
  }
}

export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** A free TCP port on loopback (bound, read, released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * A throwaway redis-server this test owns (no persistence), so it can be killed and brought
 * back on the same port to show an outage. Resolves once it accepts connections.
 */
export async function startRedisServer(port?: number): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`redis-server did not start:\n${output}`)),
      10_000,
    );
    child.stdout!.on('data', (d) => {
      output += d;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${output}`));
    });
  });
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
