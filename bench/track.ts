/**
 * POST /v1/track throughput of the real service (its own processes, every check on) next to a
 * bare node:http server parsing the same JSON, loaded with the same tool (wrk; autocannon if
 * wrk cannot be had) in the same run. Prints req/s, p50/p99 latency, peak RSS and the ratio
 * service ÷ baseline for each mode. A second bare server that also commits each event to SQLite
 * (commit-baseline-server.mjs) shows what durable storage alone costs on the machine: the
 * ceiling for any service that answers only after its commit; with a PostgreSQL mode, its
 * PostgreSQL twin (commit-baseline-postgres-server.mjs, GROUP=1: the events of one loop turn in
 * one INSERT and transaction, one at a time, as the service groups them) is measured too. The
 * modes:
 *
 *   sqlite          one process, SQLite file (the default install)
 *   postgres        one process, PostgreSQL (rate limits in process)
 *   postgres-redis  one process, PostgreSQL + Redis
 *   cluster         two processes on PostgreSQL + Redis, each loaded with half the connections
 *   sqlite-2        two `serve` instances on one SQLite file, each loaded with half the connections
 *   postgres-2p     one `serve` with TRACKWAY_PROCESSES=2 on PostgreSQL (limits via the primary)
 *   postgres-redis-2p  the same with Redis (CPU summed over the primary and its processes;
 *                   compare with --no-pin: pinned, both share the server core)
 *   sqlite-no-store, sqlite-collect-no-store, postgres-redis-no-store,
 *   postgres-redis-collect-no-store
 *                   an experiment (issue 35), not the product: the same service with the event
 *                   insert answered one loop turn later without storing anything
 *                   (bench/no-store-preload.mjs): what a request costs outside storage, beside
 *                   the ceiling (no stored-events check for these)
 *   sqlite-raw-http an experiment (issue 21), not the product: bench/raw-track-server.mjs, the
 *                   same start-up, store and route code on SQLite with POST /v1/track answered
 *                   by bare node:http instead of Fastify (every other route still Fastify's)
 *
 * The load comes from one enterprise account with custom limits nothing reaches (contract §2),
 * so the limiter still runs on every request; each request carries a new event_id (checked:
 * the events stored must match the requests answered).
 *
 * Each server is measured in rounds, each round a baseline run followed by the server's run;
 * a row shows medians over its rounds and the median of its rounds' ratios, so the machine
 * slowing down or speeding up between modes does not skew the comparison.
 *
 * Pinned by default where taskset exists and the machine has two cores or more (--no-pin to
 * share the cores): every server (baselines included) on core 1, wrk on core 0, so the figures
 * measure the server and not what wrk left of the machine. Every row also reports the server's
 * CPU time per request (utime + stime of all its processes and threads over the measured window,
 * from /proc/<pid>/stat) and that CPU's ratio to the baseline's in the same round: the figures
 * that hold on a loaded machine. PostgreSQL's and Redis's own CPU is not in it.
 *
 *   npm run bench -- [--modes sqlite,postgres,postgres-redis,cluster] [--seconds 5]
 *                    [--rounds 3] [--connections 100] [--pin | --no-pin] [--out track]
 *                    [--filled-sqlite FILE] [--filled-schema NAME] [--note TEXT] [--interleave]
 *
 * --interleave starts every mode's server at once (idle ones cost next to nothing) and loads
 * them one after the other in every round (baseline, mode 1, mode 2 …) instead of mode after
 * mode: two designs compared on a shared machine drift together. It also prints each mode's
 * CPU per request minus the first mode's, round by round.
 *
 * sqlite-collect / postgres-redis-collect load `POST /v1/collect` instead (browser events as the
 * snippet sends them, each from its own X-Forwarded-For, through one trusted proxy), beside the
 * same baseline and durable-commit ceiling: `--modes sqlite,sqlite-collect`.
 *
 * --filled-sqlite / --filled-schema add the modes sqlite-filled / postgres-redis-filled: the
 * same service on an existing, already filled database (bench/growth.ts makes one), so a run
 * can compare it with an empty one round by round.
 *
 * PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test, each mode
 * in a fresh schema, dropped afterwards); Redis at BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379, its own key prefix per run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  analyzeSchema,
  type BenchService,
  choosePinning,
  collectTargets,
  type LoadOptions,
  loadAll,
  median,
  NO_STORE_FLAGS,
  PIN_OPTIONS,
  peakRssMb,
  purchaseTemplate,
  type Run,
  saveResult,
  startBenchService,
  startProcess,
  table,
  withChildren,
  withCpu,
  withSchema,
} from './lib.ts';

const DEFAULT_MODES = ['sqlite', 'postgres', 'postgres-redis', 'cluster'] as const;
const MODES = [
  ...DEFAULT_MODES,
  'sqlite-filled',
  'postgres-redis-filled',
  'sqlite-raw-http',
  'sqlite-collect',
  'postgres-redis-collect',
  'postgres-2p',
  'postgres-redis-2p',
  'sqlite-2',
  'sqlite-no-store',
  'sqlite-collect-no-store',
  'postgres-redis-no-store',
  'postgres-redis-collect-no-store',
] as const;
type Mode = (typeof MODES)[number];

const { values } = parseArgs({
  options: {
    modes: { type: 'string', default: DEFAULT_MODES.join(',') },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '100' },
    out: { type: 'string', default: 'track' },
    'filled-sqlite': { type: 'string' },
    'filled-schema': { type: 'string' },
    note: { type: 'string' },
    interleave: { type: 'boolean' },
    ...PIN_OPTIONS,
  },
});
const seconds = Number(values.seconds);
const roundCount = Number(values.rounds);
const connections = Number(values.connections);
const modes = values.modes.split(',') as Mode[];
for (const mode of modes) {
  if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}; modes: ${MODES.join(', ')}`);
}
if (modes.includes('sqlite-filled') && !values['filled-sqlite']) {
  throw new Error('mode sqlite-filled needs --filled-sqlite FILE');
}
if (modes.includes('postgres-redis-filled') && !values['filled-schema']) {
  throw new Error('mode postgres-redis-filled needs --filled-schema NAME');
}
const pinned = choosePinning(values);
const BASELINE = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));
const COMMIT_BASELINE = fileURLToPath(new URL('./commit-baseline-server.mjs', import.meta.url));
const PG_COMMIT_BASELINE = fileURLToPath(
  new URL('./commit-baseline-postgres-server.mjs', import.meta.url),
);
const RAW_TRACK = fileURLToPath(new URL('./raw-track-server.mjs', import.meta.url));
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PG_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Row {
  server: string;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
  'peak RSS MB': string;
  'CPU µs/req': string;
  /** CPU per request ÷ the baseline's in the same round (median over the rounds). */
  'CPU ×': string;
  'non-2xx': number;
  ratio: string;
}

/** A server under test: how to load it once, and what it has used. */
interface Loadable {
  run(): Promise<Run>;
  rss(): string;
  /** Requests answered so far, warm-up included (for checkStored). */
  answered: number;
}

/** `targets` (one per process `pids`), warmed up, ready to be loaded round after round. */
async function loadable(
  pids: number[],
  targets: LoadOptions[],
  settle: () => Promise<void> = async () => {},
): Promise<Loadable> {
  // A short warm-up: JIT, connection pools and page caches in the same state for every server;
  // then `settle` (PostgreSQL: the planner statistics autovacuum would have gathered).
  const warm = await loadAll(targets.map((t) => ({ ...t, seconds: 2 })));
  await settle();
  const server: Loadable = {
    answered: warm.requests,
    async run() {
      const measured = await withCpu(pids, () => loadAll(targets));
      server.answered += measured.result.requests;
      return measured;
    },
    rss: () =>
      withChildren(pids)
        .map((pid) => peakRssMb(pid))
        .join(' + '),
  };
  return server;
}

function serviceTargets(service: BenchService): LoadOptions[] {
  const template = purchaseTemplate(service.pixelId);
  const share = Math.floor(connections / service.instances.length);
  return service.instances.map((instance) => ({
    url: `${instance.url}/v1/track`,
    headers: service.headers,
    template,
    seconds,
    connections: share,
  }));
}

/**
 * Every answered request must have stored a new event: otherwise the run measured
 * deduplication, not ingest. wrk stops counting with requests still in flight, which may be
 * stored too: up to one per connection for each run.
 */
async function checkStored(service: BenchService, answered: number, runs: number): Promise<void> {
  const res = await fetch(`${service.running.url}/v1/pixels/${service.pixelId}/events?limit=1`, {
    headers: service.headers,
  });
  const { total } = (await res.json()) as { total: number };
  const slack = runs * connections;
  if (total < answered || total > answered + slack) {
    throw new Error(`${answered} requests answered 200, but ${total} events stored`);
  }
}

/** A bare node:http server (`file`), started for `use` and stopped after. */
async function withBare<T>(
  file: string,
  use: (server: Loadable) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const running = await startProcess(process.execPath, [file], env, /listening on (\S+)/);
  try {
    const target = {
      url: `${running.url}/v1/track`,
      template: purchaseTemplate('px_bench'),
      seconds,
      connections,
    };
    return await use(await loadable([running.child.pid!], [target]));
  } finally {
    await running.stop();
  }
}

interface Opened {
  mode: Mode;
  server: Loadable;
  service: BenchService;
}

/** Every mode of `list` started at once (each warmed up), for `use`, and stopped after. */
function withModes<T>(
  list: Mode[],
  dir: string,
  use: (opened: Opened[]) => Promise<T>,
): Promise<T> {
  const [mode, ...rest] = list;
  if (mode === undefined) return use([]);
  return withMode(mode, dir, (server, service) =>
    withModes(rest, dir, (others) => use([{ mode, server, service }, ...others])),
  );
}

/** The service in `mode`, started for `use` and stopped after. */
async function withMode<T>(
  mode: Mode,
  dir: string,
  use: (server: Loadable, service: BenchService) => Promise<T>,
): Promise<T> {
  // Rate-limit keys are per account, and every run makes a new account: no clash in Redis.
  const redisEnv = { REDIS_URL };
  const start = async (
    databaseUrl: string,
    env: Record<string, string>,
    instances = 1,
    entry?: string[],
    nodeArgs: string[] = [],
  ) => {
    const service = await startBenchService(databaseUrl, env, instances, nodeArgs, entry);
    try {
      const pids = service.instances.map((i) => i.child.pid!);
      const targets = mode.includes('-collect')
        ? await collectTargets(service, connections, seconds)
        : serviceTargets(service);
      const settle = databaseUrl.startsWith('sqlite:')
        ? undefined
        : () => analyzeSchema(databaseUrl);
      return await use(await loadable(pids, targets, settle), service);
    } finally {
      await service.stop();
    }
  };
  switch (mode) {
    case 'sqlite':
      return start(`sqlite:${join(dir, 'bench.db')}`, {});
    case 'sqlite-collect':
      // Browser events from a crowd of visitors (one X-Forwarded-For each) behind one proxy.
      return start(`sqlite:${join(dir, 'bench-collect.db')}`, { TRACKWAY_TRUST_PROXY: '1' });
    case 'postgres-redis-collect':
      return withSchema((url) => start(url, { ...redisEnv, TRACKWAY_TRUST_PROXY: '1' }));
    case 'postgres':
      return withSchema((url) => start(url, {}));
    case 'postgres-redis':
      return withSchema((url) => start(url, redisEnv));
    case 'cluster':
      return withSchema((url) => start(url, redisEnv, 2));
    case 'sqlite-2':
      // Two instances on one file (what TRACKWAY_PROCESSES=2 would be on SQLite; refused).
      return start(`sqlite:${join(dir, 'bench-2.db')}`, {}, 2);
    case 'postgres-2p':
      return withSchema((url) => start(url, { TRACKWAY_PROCESSES: '2' }));
    case 'postgres-redis-2p':
      return withSchema((url) => start(url, { ...redisEnv, TRACKWAY_PROCESSES: '2' }));
    case 'sqlite-raw-http':
      return start(`sqlite:${join(dir, 'bench-raw.db')}`, {}, 1, [RAW_TRACK]);
    case 'sqlite-no-store':
      return start(`sqlite:${join(dir, 'bench-no-store.db')}`, {}, 1, undefined, NO_STORE_FLAGS);
    case 'sqlite-collect-no-store':
      return start(
        `sqlite:${join(dir, 'bench-collect-no-store.db')}`,
        { TRACKWAY_TRUST_PROXY: '1' },
        1,
        undefined,
        NO_STORE_FLAGS,
      );
    case 'postgres-redis-no-store':
      return withSchema((url) => start(url, redisEnv, 1, undefined, NO_STORE_FLAGS));
    case 'postgres-redis-collect-no-store':
      return withSchema((url) =>
        start(url, { ...redisEnv, TRACKWAY_TRUST_PROXY: '1' }, 1, undefined, NO_STORE_FLAGS),
      );
    case 'sqlite-filled':
      return start(`sqlite:${values['filled-sqlite']!}`, {});
    case 'postgres-redis-filled': {
      const url = new URL(PG_URL);
      url.searchParams.set('schema', values['filled-schema']!);
      return start(url.toString(), redisEnv);
    }
  }
}

const LABELS: Record<Mode, string> = {
  sqlite: 'trackway, SQLite, 1 process',
  postgres: 'trackway, PostgreSQL, 1 process',
  'postgres-redis': 'trackway, PostgreSQL + Redis, 1 process',
  cluster: 'trackway, PostgreSQL + Redis, 2 processes',
  'sqlite-filled': 'trackway, SQLite, 1 process, filled database',
  'postgres-redis-filled': 'trackway, PostgreSQL + Redis, 1 process, filled database',
  'sqlite-raw-http': "node:http + Trackway's domain and SQLite store (no Fastify)",
  'sqlite-collect': 'trackway, SQLite, 1 process, POST /v1/collect (browser)',
  'postgres-redis-collect': 'trackway, PostgreSQL + Redis, 1 process, POST /v1/collect',
  'postgres-2p': 'trackway, PostgreSQL, TRACKWAY_PROCESSES=2 (limits via the primary)',
  'sqlite-2': 'trackway, SQLite, 2 instances on one file, half the connections each',
  'postgres-redis-2p': 'trackway, PostgreSQL + Redis, TRACKWAY_PROCESSES=2',
  'sqlite-no-store': 'experiment: trackway, SQLite, events answered but not stored',
  'sqlite-collect-no-store': 'experiment: trackway, SQLite, POST /v1/collect, not stored',
  'postgres-redis-no-store': 'experiment: trackway, PostgreSQL + Redis, not stored',
  'postgres-redis-collect-no-store':
    'experiment: trackway, PostgreSQL + Redis, POST /v1/collect, not stored',
};

/** One table row from a server's rounds: medians, and the median of its per-round ratios. */
function row(server: string, runs: Run[], ratios: number[], cpuRatios: number[], rss: string): Row {
  const r = runs.map((run) => run.result);
  return {
    server,
    'req/s': Math.round(median(r.map((x) => x.requestsPerSecond))),
    'p50 ms': Math.round(median(r.map((x) => x.p50)) * 10) / 10,
    'p99 ms': Math.round(median(r.map((x) => x.p99)) * 10) / 10,
    'peak RSS MB': rss,
    'CPU µs/req': median(runs.map((x) => x.cpuPerRequest)).toFixed(1),
    'CPU ×': median(cpuRatios).toFixed(2),
    'non-2xx': r.reduce((sum, x) => sum + x.non2xx + x.errors, 0),
    ratio: median(ratios).toFixed(2),
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-'));
  try {
    await withBare(BASELINE, async (baseline) => {
      const baseRuns: Run[] = [];
      /**
       * This machine's speed drifts from minute to minute, so one baseline run at the start
       * would skew every ratio after it. Each round loads the baseline and then `server`, and
       * a round's ratio compares the two; the row reports the median over the rounds.
       */
      const rounds = async (servers: Loadable[]) => {
        const measured = servers.map(() => ({
          runs: [] as Run[],
          ratios: [] as number[],
          cpuRatios: [] as number[],
        }));
        for (let round = 0; round < roundCount; round++) {
          const base = await baseline.run();
          baseRuns.push(base);
          for (const [i, server] of servers.entries()) {
            const own = await server.run();
            const m = measured[i]!;
            m.runs.push(own);
            m.ratios.push(own.result.requestsPerSecond / base.result.requestsPerSecond);
            m.cpuRatios.push(own.cpuPerRequest / base.cpuPerRequest);
          }
        }
        return measured;
      };
      const rows: Row[] = [];
      // The bare server plus a durable SQLite commit per event, and nothing else: a ceiling.
      const floor = await withBare(COMMIT_BASELINE, async (server) => ({
        ...(await rounds([server]))[0]!,
        rss: server.rss(),
      }));
      rows.push(
        row('node:http + SQLite commit only', floor.runs, floor.ratios, floor.cpuRatios, floor.rss),
      );
      // The same for PostgreSQL, when a PostgreSQL mode runs: the events grouped per loop turn
      // into one INSERT and one transaction at a time, as the service's group commit does.
      if (modes.some((m) => m.startsWith('postgres') || m === 'cluster')) {
        const pgFloor = await withBare(
          PG_COMMIT_BASELINE,
          async (server) => ({ ...(await rounds([server]))[0]!, rss: server.rss() }),
          { DATABASE_URL: PG_URL, GROUP: '1' },
        );
        rows.push(
          row(
            'node:http + PostgreSQL commit only',
            pgFloor.runs,
            pgFloor.ratios,
            pgFloor.cpuRatios,
            pgFloor.rss,
          ),
        );
      }
      const modeRuns: Run[][] = [];
      const measure = async (opened: Opened[]) => {
        const measured = await rounds(opened.map((o) => o.server));
        for (const [i, { mode, server, service }] of opened.entries()) {
          // Nothing is stored in the experiment: there is nothing to check.
          if (!mode.endsWith('-no-store')) {
            await checkStored(service, server.answered, roundCount + 1);
          }
          const m = measured[i]!;
          const modeRow = row(LABELS[mode], m.runs, m.ratios, m.cpuRatios, server.rss());
          rows.push(modeRow);
          modeRuns.push(m.runs);
          console.error(`${mode}: ${modeRow['req/s']} req/s, ratio ${modeRow.ratio}`);
        }
      };
      if (values.interleave) await withModes(modes, dir, measure);
      else for (const mode of modes) await withModes([mode], dir, measure);
      const invalid = rows.some((r) => r['non-2xx'] > 0);
      const baseRow = row(
        'bare node:http (baseline)',
        baseRuns,
        baseRuns.map(() => 1),
        baseRuns.map(() => 1),
        baseline.rss(),
      );
      rows.unshift(baseRow);
      console.log(
        `\nPOST /v1/track, ${connections} connections, ${roundCount} rounds of ${seconds} s per server ` +
          `(each beside a baseline run), medians; load from ${baseRuns[0]!.result.tool}, ` +
          `${pinned ? 'servers pinned to core 1, load to core 0' : 'not pinned'}\n`,
      );
      console.log(table(rows as unknown as Array<Record<string, string | number>>));
      if (values.interleave && modes.length > 1) {
        // Each round loaded every mode one after the other: the difference within a round is
        // the one the machine's drift touches least.
        console.log(`\nCPU µs/request against ${modes[0]}, round by round (interleaved):`);
        for (const [i, mode] of modes.entries()) {
          if (i === 0) continue;
          const diffs = modeRuns[i]!.map(
            (run, r) => run.cpuPerRequest - modeRuns[0]![r]!.cpuPerRequest,
          );
          console.log(
            `  ${mode}: ${diffs.map((d) => d.toFixed(1)).join(', ')} (median ${median(diffs).toFixed(1)})`,
          );
        }
      }
      const single = rows.find((r) => r.server === LABELS['postgres-redis']);
      const cluster = rows.find((r) => r.server === LABELS.cluster);
      if (single && cluster) {
        console.log(
          `\ntwo instances ÷ one (PostgreSQL + Redis): ${(cluster['req/s'] / single['req/s']).toFixed(2)}`,
        );
      }
      const tool = baseRuns[0]!.result.tool;
      console.log(
        `\nresults: ${saveResult(values.out, {
          seconds,
          rounds: roundCount,
          connections,
          tool,
          pinned,
          interleaved: values.interleave === true,
          loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
          note: values.note,
          rows,
        })}`,
      );
      if (invalid) {
        console.error(
          '\nnon-2xx responses or errors from the service: those figures are not valid',
        );
        process.exitCode = 1;
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
