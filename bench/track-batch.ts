/**
 * POST /v1/track/batch throughput of the real service (its own process, every check on) next to
 * the storage-only ceiling for its store (commit-baseline-server.mjs for SQLite,
 * commit-baseline-postgres-server.mjs for PostgreSQL: node:http, gunzip, JSON.parse and the
 * commit of the same events into the same events table, nothing else) and the bare node:http
 * baseline (gunzip and JSON.parse only), loaded the same way in the same run. Each request
 * carries `--size` events (default 1,000, the most a batch may hold), gzip-compressed, with
 * fresh event_ids; the figures that matter are events per second, the service's share of the
 * ceiling's (target ≥ 0.80, issue 21) and the CPU each event costs.
 *
 * Pinned like bench/track.ts (servers on core 1, wrk on core 0) unless --no-pin. Each store is
 * measured in interleaved rounds (baseline, ceiling, service); rows show medians, and a
 * round's ratios compare runs of that round only.
 *
 *   npm run bench:batch -- [--stores sqlite,postgres] [--seconds 5] [--rounds 3]
 *                          [--connections 10] [--size 1000] [--pin | --no-pin] [--note TEXT]
 *                          [--no-store]
 *
 * --no-store is an experiment (issue 35), not the product: the service runs with
 * bench/no-store-preload.mjs, every batch answered one loop turn after its insert is asked for,
 * nothing written: what a batch costs outside storage, beside the same ceiling.
 *
 * PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), every
 * server in its own fresh schema, dropped afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  analyzeSchema,
  choosePinning,
  type LoadOptions,
  load,
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
  withCpu,
  withSchema,
} from './lib.ts';

const STORES = ['sqlite', 'postgres'] as const;
type Store = (typeof STORES)[number];

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: STORES.join(',') },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    size: { type: 'string', default: '1000' },
    note: { type: 'string' },
    'no-store': { type: 'boolean', default: false },
    ...PIN_OPTIONS,
  },
});
const seconds = Number(values.seconds);
const roundCount = Number(values.rounds);
const connections = Number(values.connections);
const size = Number(values.size);
const stores = values.stores.split(',') as Store[];
for (const store of stores) {
  if (!STORES.includes(store)) throw new Error(`unknown store ${store}: ${STORES.join(', ')}`);
}
const pinned = choosePinning(values);
const file = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const BASELINE = file('./baseline-server.mjs');
const CEILING: Record<Store, string> = {
  sqlite: file('./commit-baseline-server.mjs'),
  postgres: file('./commit-baseline-postgres-server.mjs'),
};
const WARM_UP_SECONDS = 2;
const noStore = values['no-store'];

/** The same ~430-byte Purchase as bench/track.ts, `size` of them per request, ids all new. */
const batchTemplate = (pixelId: string) => {
  const one = purchaseTemplate(pixelId);
  return `{"events":[${Array.from({ length: size }, (_, k) => one.replace('__N__', `__N__-${k}`)).join(',')}]}`;
};

/** A server loaded with gzip batches, run after run, each run with enough fresh bodies. */
interface BatchTarget {
  run(): Promise<Run>;
  rss(): number;
}

async function batchTarget(
  pid: number,
  target: Omit<LoadOptions, 'seconds'>,
  settle: () => Promise<void> = async () => {},
) {
  // Bodies are made before each run, as many as the last run's rate says it can send (and
  // half as many again): a body sent twice would be deduplicated, which is cheaper.
  let lastRate = 0;
  const once = async (runSeconds: number) => {
    const gzipBodies = Math.ceil(lastRate * runSeconds * 1.5) + 4 * connections;
    const measured = await withCpu([pid], () =>
      load({ ...target, seconds: runSeconds, gzipBodies }),
    );
    lastRate = Math.max(lastRate, measured.result.requestsPerSecond);
    return measured;
  };
  // The warm-up may repeat bodies (its rate is not known before it): it is not measured.
  lastRate = 50;
  await once(WARM_UP_SECONDS);
  // PostgreSQL: the planner statistics autovacuum would have gathered (lib.ts analyzeSchema).
  await settle();
  const server: BatchTarget = { run: () => once(seconds), rss: () => peakRssMb(pid) };
  return server;
}

interface Row {
  server: string;
  'req/s': number;
  'events/s': number;
  'p50 ms': number;
  'p99 ms': number;
  'peak RSS MB': number;
  'CPU µs/event': string;
  'CPU × ceiling': string;
  'non-2xx': number;
  'repeated bodies': number;
  '÷ ceiling': string;
}

function row(server: string, runs: Run[], ceiling: Run[], rss: number): Row {
  const r = runs.map((run) => run.result);
  return {
    server,
    'req/s': Math.round(median(r.map((x) => x.requestsPerSecond))),
    'events/s': Math.round(median(r.map((x) => x.requestsPerSecond)) * size),
    'p50 ms': Math.round(median(r.map((x) => x.p50)) * 10) / 10,
    'p99 ms': Math.round(median(r.map((x) => x.p99)) * 10) / 10,
    'peak RSS MB': rss,
    'CPU µs/event': (median(runs.map((x) => x.cpuPerRequest)) / size).toFixed(2),
    'CPU × ceiling': median(
      runs.map((x, i) => x.cpuPerRequest / ceiling[i]!.cpuPerRequest),
    ).toFixed(2),
    'non-2xx': r.reduce((sum, x) => sum + x.non2xx + x.errors, 0),
    'repeated bodies': r.reduce((sum, x) => sum + x.repeated, 0),
    '÷ ceiling': median(
      r.map((x, i) => x.requestsPerSecond / ceiling[i]!.result.requestsPerSecond),
    ).toFixed(2),
  };
}

/** The service on `store`, started for `use` and stopped after. */
async function withService<T>(store: Store, use: (target: BatchTarget) => Promise<T>): Promise<T> {
  const start = async (databaseUrl: string) => {
    const service = await startBenchService(databaseUrl, {}, 1, noStore ? NO_STORE_FLAGS : []);
    try {
      const url = `${service.running.url}/v1/track/batch`;
      const template = batchTemplate(service.pixelId);
      // A batch answers 200 even when events in it are refused: check one is wholly accepted.
      const probe = await fetch(url, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: template.replaceAll('__N__', 'probe'),
      });
      const accepted = ((await probe.json()) as { accepted: number }).accepted;
      if (accepted !== size) throw new Error(`probe batch: ${accepted} of ${size} accepted`);
      const pid = service.running.child.pid!;
      return await use(
        await batchTarget(pid, { url, headers: service.headers, template, connections }, () =>
          store === 'postgres' ? analyzeSchema(databaseUrl) : Promise.resolve(),
        ),
      );
    } finally {
      await service.stop();
    }
  };
  if (store === 'postgres') return withSchema(start);
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-'));
  try {
    return await start(`sqlite:${join(dir, 'bench.db')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A bare server (`script`), started for `use` and stopped after. */
async function withBare<T>(script: string, use: (target: BatchTarget) => Promise<T>) {
  const env = { DATABASE_URL: process.env['BENCH_DATABASE_URL'] ?? '' };
  const running = await startProcess(process.execPath, [script], env, /listening on (\S+)/);
  try {
    const url = `${running.url}/v1/track/batch`;
    return await use(
      await batchTarget(running.child.pid!, {
        url,
        template: batchTemplate('px_bench'),
        connections,
      }),
    );
  } finally {
    await running.stop();
  }
}

async function measureStore(store: Store): Promise<Row[]> {
  return withBare(BASELINE, (baseline) =>
    withBare(CEILING[store], (ceiling) =>
      withService(store, async (service) => {
        const runs = { baseline: [] as Run[], ceiling: [] as Run[], service: [] as Run[] };
        for (let round = 0; round < roundCount; round++) {
          runs.baseline.push(await baseline.run());
          runs.ceiling.push(await ceiling.run());
          runs.service.push(await service.run());
        }
        return [
          row(
            `bare node:http, gunzip + parse (${store} round)`,
            runs.baseline,
            runs.ceiling,
            baseline.rss(),
          ),
          row(
            `node:http + ${store} commit only (ceiling)`,
            runs.ceiling,
            runs.ceiling,
            ceiling.rss(),
          ),
          row(
            `trackway POST /v1/track/batch (${store}${noStore ? ', experiment: nothing stored' : ''})`,
            runs.service,
            runs.ceiling,
            service.rss(),
          ),
        ];
      }),
    ),
  );
}

const rows: Row[] = [];
for (const store of stores) {
  const storeRows = await measureStore(store);
  rows.push(...storeRows);
  console.error(
    `${store}: ${storeRows[2]!['events/s']} events/s, ${storeRows[2]!['÷ ceiling']} of the ceiling`,
  );
}
console.log(
  `\nPOST /v1/track/batch, ${size} events per request (gzip), ${connections} connections, ` +
    `${roundCount} rounds of ${seconds} s per server, medians; ` +
    `${pinned ? 'servers pinned to core 1, load to core 0' : 'not pinned'}\n`,
);
console.log(table(rows as unknown as Array<Record<string, string | number>>));
console.log(
  `\nresults: ${saveResult('track-batch', {
    seconds,
    rounds: roundCount,
    connections,
    size,
    gzip: true,
    pinned,
    loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
    note: values.note,
    noStore,
    rows,
  })}`,
);
if (rows.some((r) => r['non-2xx'] > 0 || r['repeated bodies'] > 0)) {
  console.error('\nnon-2xx responses, errors or repeated bodies: those figures are not valid');
  process.exitCode = 1;
}
