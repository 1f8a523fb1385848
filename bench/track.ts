/**
 * POST /v1/track throughput of the real service (its own processes, every check on) next to a
 * bare node:http server parsing the same JSON, loaded with the same tool (wrk; autocannon if
 * wrk cannot be had) in the same run. Prints req/s, p50/p99 latency, peak RSS and the ratio
 * service ÷ baseline for each mode. A second bare server that also commits each event to SQLite
 * (commit-baseline-server.mjs) shows what durable storage alone costs on the machine: the
 * ceiling for any service that answers only after its commit. The modes:
 *
 *   sqlite          one process, SQLite file (the default install)
 *   postgres        one process, PostgreSQL (rate limits in process)
 *   postgres-redis  one process, PostgreSQL + Redis
 *   cluster         two processes on PostgreSQL + Redis, each loaded with half the connections
 *
 * The load comes from one enterprise account with custom limits nothing reaches (contract §2),
 * so the limiter still runs on every request; each request carries a new event_id.
 *
 *   npm run bench -- [--modes sqlite,postgres,postgres-redis,cluster] [--seconds 10]
 *                    [--connections 100]
 *
 * PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test, each mode
 * in a fresh schema, dropped afterwards); Redis at BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379, its own key prefix per run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  type BenchService,
  cpuMs,
  type LoadResult,
  load,
  loadAll,
  peakRssMb,
  purchaseTemplate,
  saveResult,
  startBenchService,
  startProcess,
  table,
  withSchema,
} from './lib.ts';

const MODES = ['sqlite', 'postgres', 'postgres-redis', 'cluster'] as const;
type Mode = (typeof MODES)[number];

const { values } = parseArgs({
  options: {
    modes: { type: 'string', default: MODES.join(',') },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const modes = values.modes.split(',') as Mode[];
for (const mode of modes) {
  if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}; modes: ${MODES.join(', ')}`);
}
const BASELINE = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));
const COMMIT_BASELINE = fileURLToPath(new URL('./commit-baseline-server.mjs', import.meta.url));
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

interface Row {
  server: string;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
  'peak RSS MB': string;
  'CPU µs/req': string;
  'non-2xx': number;
  ratio: string;
}

interface Measured {
  result: LoadResult;
  rss: string;
  /** Server CPU (all its processes) per request served during the measured run, in µs. */
  cpuPerRequest: number;
}

/** Runs `load` and returns its result with the CPU the processes `pids` spent per request. */
async function withCpu(
  pids: number[],
  load: () => Promise<LoadResult>,
): Promise<{ result: LoadResult; cpuPerRequest: number }> {
  const spent = () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const before = spent();
  const result = await load();
  return { result, cpuPerRequest: ((spent() - before) * 1000) / result.requests };
}

async function measure(service: BenchService): Promise<Measured> {
  const template = purchaseTemplate(service.pixelId);
  const share = Math.floor(connections / service.instances.length);
  const targets = service.instances.map((instance) => ({
    url: `${instance.url}/v1/track`,
    headers: service.headers,
    template,
    seconds,
    connections: share,
  }));
  // A short warm-up: JIT, connection pools and page caches in the same state for every mode.
  const warm = await loadAll(targets.map((t) => ({ ...t, seconds: 2 })));
  const pids = service.instances.map((i) => i.child.pid!);
  const { result, cpuPerRequest } = await withCpu(pids, () => loadAll(targets));
  const rss = pids.map((pid) => peakRssMb(pid)).join(' + ');
  await checkStored(service, warm.requests + result.requests);
  return { result, rss, cpuPerRequest };
}

/**
 * Every answered request must have stored a new event: otherwise the run measured
 * deduplication, not ingest. wrk stops counting with requests still in flight, which may be
 * stored too: up to one per connection for each of the two runs.
 */
async function checkStored(service: BenchService, answered: number): Promise<void> {
  const res = await fetch(`${service.running.url}/v1/pixels/${service.pixelId}/events?limit=1`, {
    headers: service.headers,
  });
  const { total } = (await res.json()) as { total: number };
  const slack = 2 * connections;
  if (total < answered || total > answered + slack) {
    throw new Error(`${answered} requests answered 200, but ${total} events stored`);
  }
}

/** One of the bare node:http servers (`file`), loaded like the service. */
async function measureBare(file: string): Promise<Measured> {
  const server = await startProcess(process.execPath, [file], {}, /listening on (\S+)/);
  try {
    const target = {
      url: `${server.url}/v1/track`,
      template: purchaseTemplate('px_bench'),
      seconds,
      connections,
    };
    await load({ ...target, seconds: 2 });
    const pid = server.child.pid!;
    const { result, cpuPerRequest } = await withCpu([pid], () => load(target));
    return { result, rss: String(peakRssMb(pid)), cpuPerRequest };
  } finally {
    await server.stop();
  }
}

async function runMode(mode: Mode, dir: string): Promise<Measured> {
  // Rate-limit keys are per account, and every run makes a new account: no clash in Redis.
  const redisEnv = { REDIS_URL };
  const start = async (databaseUrl: string, env: Record<string, string>, instances = 1) => {
    const service = await startBenchService(databaseUrl, env, instances);
    try {
      return await measure(service);
    } finally {
      await service.stop();
    }
  };
  switch (mode) {
    case 'sqlite':
      return start(`sqlite:${join(dir, 'bench.db')}`, {});
    case 'postgres':
      return withSchema((url) => start(url, {}));
    case 'postgres-redis':
      return withSchema((url) => start(url, redisEnv));
    case 'cluster':
      return withSchema((url) => start(url, redisEnv, 2));
  }
}

const LABELS: Record<Mode, string> = {
  sqlite: 'trackway, SQLite, 1 process',
  postgres: 'trackway, PostgreSQL, 1 process',
  'postgres-redis': 'trackway, PostgreSQL + Redis, 1 process',
  cluster: 'trackway, PostgreSQL + Redis, 2 processes',
};

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-'));
  try {
    const base = await measureBare(BASELINE);
    // The bare server plus a durable SQLite commit per event, and nothing else: a ceiling.
    const floor = await measureBare(COMMIT_BASELINE);
    const row = (server: string, r: LoadResult, rss: string, cpu: number): Row => ({
      server,
      'req/s': r.requestsPerSecond,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'peak RSS MB': rss,
      'CPU µs/req': cpu.toFixed(1),
      'non-2xx': r.non2xx + r.errors,
      ratio: (r.requestsPerSecond / base.result.requestsPerSecond).toFixed(2),
    });
    const rows: Row[] = [
      row('bare node:http (baseline)', base.result, base.rss, base.cpuPerRequest),
      row('node:http + SQLite commit only', floor.result, floor.rss, floor.cpuPerRequest),
    ];
    let invalid = false;
    for (const mode of modes) {
      const { result, rss, cpuPerRequest } = await runMode(mode, dir);
      rows.push(row(LABELS[mode], result, rss, cpuPerRequest));
      if (result.non2xx > 0 || result.errors > 0) invalid = true;
      console.error(`${mode}: ${result.requestsPerSecond} req/s`);
    }
    console.log(
      `\nPOST /v1/track, ${connections} connections, ${seconds} s per mode, load from ${base.result.tool}\n`,
    );
    console.log(table(rows as unknown as Array<Record<string, string | number>>));
    const single = rows.find((r) => r.server === LABELS['postgres-redis']);
    const cluster = rows.find((r) => r.server === LABELS.cluster);
    if (single && cluster) {
      console.log(
        `\ntwo instances ÷ one (PostgreSQL + Redis): ${(cluster['req/s'] / single['req/s']).toFixed(2)}`,
      );
    }
    console.log(
      `\nresults: ${saveResult('track', { seconds, connections, tool: base.result.tool, rows })}`,
    );
    if (invalid) {
      console.error('\nnon-2xx responses or errors from the service: those figures are not valid');
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
