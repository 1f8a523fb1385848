/**
 * What rate limiting costs on the hot path: POST /v1/track throughput of the same server build
 * with limits off (TRACKWAY_RATE_LIMITS=off, benchmarks only), with the in-process limiter (the
 * default), and with the Redis limiter (REDIS_URL, a throwaway local redis-server), loaded the
 * same way in one run. Each configuration gets a fresh SQLite file and an enterprise account
 * with custom limits it never reaches, so every request is counted and none is refused.
 * The configurations take turns for several rounds and each reports its median round, so load
 * from anything else on the machine falls on all three alike rather than on whichever ran
 * during it. Prints req/s, p50/p99 and each configuration's ratio to limits-off (target
 * overhead < 10 %).
 *
 *   npm run bench:ratelimit -- [--seconds 10] [--connections 100] [--rounds 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyReply } from 'fastify';
import type { Account } from '../src/domain/model.ts';
import type { RateLimiter } from '../src/domain/ports/rate-limiter.ts';
import { limitAccount } from '../src/http/rate-limit.ts';
import { MemoryRateLimiter } from '../src/rate-limit/memory.ts';
import { connectRedis, RedisRateLimiter, redisReady } from '../src/rate-limit/redis.ts';
import { startRedisServer } from '../test/redis.ts';
import {
  type LoadResult,
  load,
  purchaseTemplate,
  saveResult,
  startBenchService,
  table,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

/** The round with the median req/s (its latencies come with it). */
function median(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * The limiter's own cost, free of the noise of a whole server on a shared machine: the hot-path
 * step (count + headers) run back to back in this process, in microseconds per request.
 */
async function stepCost(limiter: RateLimiter, calls: number): Promise<number> {
  const account: Account = {
    id: 'acct_bench',
    name: 'Bench',
    plan: 'enterprise',
    status: 'active',
    customRequestsPerMinute: 1e12,
    customDailyLimit: 1e15,
    createdAt: new Date(),
  };
  const reply = { headers: () => reply } as unknown as FastifyReply;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await limitAccount(limiter, account, new Date(), reply);
  return Number(process.hrtime.bigint() - started) / calls / 1000;
}

async function measure(dir: string, name: string, env: Record<string, string>) {
  const service = await startBenchService(`sqlite:${join(dir, `${name}.db`)}`, env);
  try {
    const url = `${service.running.url}/v1/track`;
    const template = purchaseTemplate(service.pixelId);
    // A short warm-up so the JIT and SQLite page cache are in the same state for every run.
    await load({ url, headers: service.headers, template, seconds: 2, connections });
    return await load({ url, headers: service.headers, template, seconds, connections });
  } finally {
    await service.stop();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-rl-'));
  const redis = await startRedisServer();
  try {
    const configurations: Array<[string, string, Record<string, string>]> = [
      ['limits off', 'off', { TRACKWAY_RATE_LIMITS: 'off' }],
      ['in-process limiter', 'memory', {}],
      ['Redis limiter', 'redis', { REDIS_URL: redis.url }],
    ];
    const results = configurations.map((): LoadResult[] => []);
    for (let round = 1; round <= rounds; round++) {
      for (const [i, [label, name, env]] of configurations.entries()) {
        const result = await measure(dir, `${name}-${round}`, env);
        results[i]!.push(result);
        console.log(`round ${round}: ${label.padEnd(18)} ${result.requestsPerSecond} req/s`);
      }
    }
    const runs = configurations.map(([label], i): [string, LoadResult] => [
      label,
      median(results[i]!),
    ]);
    const all = results.flat();
    const memoryStep = await stepCost(new MemoryRateLimiter(), 200_000);
    const connection = connectRedis(redis.url);
    await redisReady(connection, 5_000);
    const redisLimiter = new RedisRateLimiter(connection, { prefix: 'bench:' });
    await stepCost(redisLimiter, 1_000);
    const redisStep = await stepCost(redisLimiter, 10_000);
    await redisLimiter.close();
    const off = runs[0]![1].requestsPerSecond;
    const rows = runs.map(([server, r]) => ({
      'POST /v1/track': server,
      'req/s': r.requestsPerSecond,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'non-2xx': r.non2xx,
      errors: r.errors,
      'ratio to off': (r.requestsPerSecond / off).toFixed(3),
      overhead: `${((1 - r.requestsPerSecond / off) * 100).toFixed(1)} %`,
    }));
    console.log(
      `\nPOST /v1/track, ${connections} connections, ${seconds} s per run after a 2 s warm-up, median of ${rounds} interleaved rounds\n`,
    );
    console.log(table(rows));
    console.log(
      `\nlimiter step alone (count + headers), sequential: in-process ${memoryStep.toFixed(2)} µs/request, Redis ${redisStep.toFixed(1)} µs/request (one round trip; concurrent requests overlap it)`,
    );
    console.log(
      `\nresults: ${saveResult('rate-limit', {
        seconds,
        connections,
        rounds,
        rows,
        rounds_req_per_s: Object.fromEntries(
          configurations.map(([label], i) => [label, results[i]!.map((r) => r.requestsPerSecond)]),
        ),
      })}`,
    );
    if (all.some((r) => r.non2xx > 0 || r.errors > 0)) {
      console.error('\nnon-2xx responses or errors: the figures are not valid');
      process.exitCode = 1;
    }
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
