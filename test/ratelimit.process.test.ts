/**
 * Rate limits across real processes: two `trackway serve` instances sharing one SQLite file and
 * one Redis must admit exactly the plan's number; a plan change reaches both at once; a Redis
 * outage degrades to per-instance limits and recovers.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Agent } from 'undici';
import { tempDir } from './harness.ts';
import { runCli, type ServerProcess, startServerProcess, waitForOutput } from './process.ts';
import { startRedisServer, TEST_REDIS_URL, testRedis } from './redis.ts';

const agent = new Agent({ connections: 200, pipelining: 1 });

async function call(server: ServerProcess, key: string | undefined) {
  const res = await fetch(`${server.url}/v1/pixels`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    // @ts-expect-error undici's dispatcher option is not in the DOM fetch types
    dispatcher: agent,
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Record<string, unknown>,
  };
}

async function createAccount(env: Record<string, string>, plan: string) {
  const created = await runCli(
    ['accounts', 'create', '--name', 'Load', '--plan', plan, '--json'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  return JSON.parse(created.stdout) as { account_id: string; api_key: string };
}

/**
 * A burst must sit inside one UTC minute for "exactly 500" to be the right answer. Starting with
 * at least 10 s left makes that so; this waits for a minute to begin, it asserts nothing on time.
 */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await sleep(left + 50);
}

describe('rate limits across two instances sharing Redis (real processes)', () => {
  const dir = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'shared.db')}`, REDIS_URL: TEST_REDIS_URL };
  let servers: ServerProcess[] = [];
  let redisUp = false;

  before(async () => {
    const probe = await testRedis();
    if (!probe) return;
    probe.disconnect();
    redisUp = true;
    // Accounts first, so neither server makes a first-run account; then both servers.
    await runCli(['migrate'], env);
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    dir.remove();
  });

  it('admits exactly 500 of 1,500 concurrent requests for a pro account, across both', async (t) => {
    if (!redisUp) return t.skip('Redis is not reachable');
    const { account_id, api_key } = await createAccount(env, 'pro');
    await awayFromMinuteEnd();
    const results = await Promise.all(
      Array.from({ length: 1_500 }, (_, i) => call(servers[i % 2]!, api_key)),
    );
    const admitted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    assert.equal(admitted.length, 500);
    assert.equal(refused.length, 1_000);
    for (const r of refused) {
      assert.equal(r.body['error'], 'Rate limit exceeded');
      assert.ok(Number(r.body['retry_after']) >= 1);
      assert.equal(r.headers.get('retry-after'), String(r.body['retry_after']));
    }
    // Both instances admitted some: the count really was shared, not split.
    const perServer = [0, 1].map(
      (s) => results.filter((r, i) => i % 2 === s && r.status === 200).length,
    );
    assert.ok(
      perServer.every((n) => n > 0),
      `admitted per server: ${perServer}`,
    );
    const remaining = new Set(admitted.map((r) => r.headers.get('x-ratelimit-remaining')));
    assert.equal(remaining.size, 500, 'every admitted request saw its own place in the count');

    // A plan change via the CLI reaches both instances within 1 s (the key cache's bound) and
    // keeps the counts: 500 of today's requests are already used.
    const reset = admitted[0]!.headers.get('x-ratelimit-reset');
    const change = await runCli(['plans', 'set', '--account', account_id, '--plan', 'ultra'], env);
    assert.equal(change.code, 0, change.stderr);
    await sleep(1_100);
    const [a, b] = [await call(servers[0]!, api_key), await call(servers[1]!, api_key)];
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(a.headers.get('x-ratelimit-limit'), '2000');
    assert.equal(b.headers.get('x-ratelimit-limit'), '2000');
    assert.match(b.headers.get('ratelimit')!, /"day";r=2879498;/);
    if (b.headers.get('x-ratelimit-reset') === reset) {
      assert.equal(b.headers.get('x-ratelimit-remaining'), '1498', 'the minute was not reset');
    }
  });
});

describe('Redis outage: fail open to per-instance limits, then recover (real processes)', () => {
  const dir = tempDir();
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let server: ServerProcess;
  let client: Redis;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedisServer();
    env = { DATABASE_URL: `sqlite:${join(dir.path, 'outage.db')}`, REDIS_URL: redis.url };
    await runCli(['migrate'], env);
    server = await startServerProcess(env);
    client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
  });
  after(async () => {
    client.disconnect();
    await server.stop('SIGKILL');
    await redis.stop();
    dir.remove();
  });

  /** What Redis holds for the account's current minute (null when it holds nothing). */
  async function minuteCount(accountId: string): Promise<number | null> {
    const keys = await client.keys(`trackway:rl:acct:${accountId}:minute:*`);
    if (keys.length === 0) return null;
    return Number(await client.get(keys[0]!));
  }

  it('keeps serving with headers while Redis is down and counts in Redis again after', async () => {
    const { account_id, api_key } = await createAccount(env, 'pro');
    await awayFromMinuteEnd();
    await client.connect();
    for (let i = 0; i < 3; i++) assert.equal((await call(server, api_key)).status, 200);
    assert.equal(await minuteCount(account_id), 3);

    client.disconnect();
    await redis.stop();
    for (let i = 0; i < 5; i++) {
      const res = await call(server, api_key);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-limit'), '500');
      // The instance counts on its own now, from its own (empty) memory.
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(499 - i));
    }
    await waitForOutput(server, /Redis at \S+ unreachable/);
    const warnings = server.output().match(/Redis at \S+ unreachable/g) ?? [];
    assert.equal(warnings.length, 1, server.output());

    redis = await startRedisServer(redis.port);
    client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    // ioredis reconnects on its own schedule; wait for the first request Redis counts.
    let counted: number | null = null;
    for (let i = 0; counted === null && i < 100; i++) {
      assert.equal((await call(server, api_key)).status, 200);
      counted = await minuteCount(account_id);
      if (counted === null) await sleep(100);
    }
    assert.equal(counted, 1, 'the restarted (empty) Redis holds the requests since it returned');
    const res = await call(server, api_key);
    assert.equal(res.headers.get('x-ratelimit-remaining'), '498');
    assert.equal(await minuteCount(account_id), 2);
    await waitForOutput(server, /Redis at \S+ reachable again/);
  });
});
