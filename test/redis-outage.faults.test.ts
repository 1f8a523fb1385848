/**
 * Redis outage under load (issue 7): 20 writers track continuously while the Redis holding the
 * rate limits is killed for 5 s and brought back. Nothing fails, nothing hangs, the outage is
 * logged once, and counting returns to Redis by itself. Real processes, a Redis of its own.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { tempDir } from './harness.ts';
import { runCli, startServerProcess } from './process.ts';
import { startRedisServer } from './redis.ts';

describe('Redis outage under load (real processes)', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('keeps answering 200 through the outage and counts in Redis again after', async () => {
    let redis = await startRedisServer();
    const env = { DATABASE_URL: `sqlite:${join(dir.path, 'redis.db')}`, REDIS_URL: redis.url };
    const made = await runCli(
      ['accounts', 'create', '--name', 'Load', '--plan', 'enterprise', '--json'],
      env,
    );
    assert.equal(made.code, 0, made.stderr);
    const { api_key: key, account_id: account } = JSON.parse(made.stdout);
    // Limits the load never reaches: any 429 here would hide what the outage did.
    const plan = await runCli(
      [
        'plans',
        'set',
        '--account',
        account,
        '--plan',
        'enterprise',
        '--requests-per-minute',
        '10000000',
        '--daily-limit',
        '100000000',
      ],
      env,
    );
    assert.equal(plan.code, 0, plan.stderr);
    const server = await startServerProcess(env);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    try {
      const created = await fetch(`${server.url}/v1/pixels`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Shop', domain: 'shop.example.com' }),
      });
      const pixelId = ((await created.json()) as { id: string }).id;
      const statuses = new Map<number, number>();
      let slowest = 0;
      let running = true;
      let n = 0;
      const writers = Array.from({ length: 20 }, async () => {
        while (running) {
          const started = Date.now();
          const res = await fetch(`${server.url}/v1/track`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ pixel_id: pixelId, event_name: 'Lead', event_id: `r-${n++}` }),
          });
          await res.arrayBuffer();
          assert.ok(res.headers.get('x-ratelimit-limit'), 'limit headers on every answer');
          slowest = Math.max(slowest, Date.now() - started);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      });

      await sleep(1_000);
      await redis.stop();
      await sleep(5_000);
      redis = await startRedisServer(redis.port);
      const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
      client.on('error', () => {});
      // Counting returns to the (restarted, empty) Redis without a restart of the service.
      let counted = 0;
      for (let i = 0; counted === 0 && i < 100; i++) {
        counted = (await client.keys(`trackway:rl:acct:${account}:minute:*`)).length;
        if (counted === 0) await sleep(100);
      }
      client.disconnect();
      running = false;
      await Promise.all(writers);

      assert.ok(counted > 0, 'rate limits are counted in Redis again');
      const total = [...statuses.values()].reduce((a, b) => a + b, 0);
      assert.deepEqual([...statuses.keys()], [200], JSON.stringify(Object.fromEntries(statuses)));
      assert.ok(slowest < 2_000, `slowest request ${slowest} ms`);
      const warnings = server.output().match(/Redis at \S+ unreachable/g) ?? [];
      assert.equal(warnings.length, 1, 'the outage is logged once');
      console.log(
        `redis outage: ${total} requests through a 5 s Redis outage, all 200, slowest ${slowest} ms; ` +
          'one warning; counting back in Redis after the restart',
      );
    } finally {
      await server.stop('SIGKILL');
      await redis.stop();
    }
  });
});
