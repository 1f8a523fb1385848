/**
 * Where the CPU of one POST /v1/track goes: the service (one process, every check on, the
 * enterprise account of bench/lib.ts; SQLite, or with `--store postgres-redis` PostgreSQL and
 * Redis as `npm run bench` starts them) runs under `node --cpu-prof`, pinned to core 1 with
 * wrk on core 0 like `npm run bench`; after a warm-up it is loaded for `--seconds`, and the
 * samples taken in that window are charged to stages (bench/cpu-stages.ts) and divided by the
 * requests answered in it. Prints the table, saves it to bench/results/profile.json and keeps
 * the .cpuprofile there too (open it in Chrome DevTools or speedscope to look deeper).
 *
 *   npm run bench:profile -- [--store sqlite|postgres-redis] [--route track|collect]
 *                            [--seconds 10] [--connections 100] [--pin | --no-pin] [--note TEXT]
 *                            [--raw-http] [--no-store]
 *
 * --route collect profiles POST /v1/collect instead: the browser events of `npm run bench`'s
 * collect modes (lib.ts collectTargets, one X-Forwarded-For each behind one trusted proxy),
 * saved to bench/results/profile-collect*.json.
 *
 * --raw-http (SQLite) profiles bench/raw-track-server.mjs instead (the issue 21 experiment: the
 * same product code with POST /v1/track answered by bare node:http, no Fastify) and saves to
 * bench/results/profile-raw-http.json.
 *
 * --no-store profiles the issue 35 experiment of `npm run bench`'s *-no-store modes
 * (bench/no-store-preload.mjs: the insert answered a loop turn later, nothing written), saved
 * with `-no-store` in the name: beside a profile of the product, which stages the storage call
 * changes besides its own.
 *
 * postgres-redis: PostgreSQL at BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test, in a fresh schema dropped afterwards) and Redis at
 * BENCH_REDIS_URL (default redis://127.0.0.1:6379). Only the service process is profiled: the
 * database's and Redis's own CPU is theirs, outside the table (and outside /proc's figure).
 * But V8 samples on a wall clock, and PostgreSQL and Redis are not pinned: a socket write that
 * wakes one of them on the server's core is charged with the time it then runs there, so the
 * pg and ioredis writes (storage call, rate limit) read high, the more so on a loaded machine.
 * Count round trips, and trust /proc's figure (or bench/fixed.mjs) for what they cost.
 *
 * The profiler itself costs CPU (sampling every --cpu-prof-interval µs, here 250): compare the
 * stages with each other and with /proc's CPU per request printed beside them, not with an
 * unprofiled run's absolute figures.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type CpuProfile, STAGES, stageTable } from './cpu-stages.ts';
import {
  analyzeSchema,
  type BenchService,
  choosePinning,
  collectTargets,
  type LoadOptions,
  load,
  NO_STORE_FLAGS,
  PIN_OPTIONS,
  peakRssMb,
  purchaseTemplate,
  saveResult,
  startBenchService,
  table,
  withCpu,
  withSchema,
} from './lib.ts';

const STORES = ['sqlite', 'postgres-redis'] as const;
type Store = (typeof STORES)[number];
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    route: { type: 'string', default: 'track' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
    note: { type: 'string' },
    'raw-http': { type: 'boolean' },
    'no-store': { type: 'boolean' },
    ...PIN_OPTIONS,
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
if (!STORES.includes(values.store as Store)) {
  throw new Error(`--store must be one of ${STORES.join(', ')}, got "${values.store}"`);
}
const store = values.store as Store;
const rawHttp = values['raw-http'] === true;
if (rawHttp && store !== 'sqlite') throw new Error('--raw-http runs on SQLite only');
if (values.route !== 'track' && values.route !== 'collect') {
  throw new Error(`--route must be track or collect, got "${values.route}"`);
}
const collect = values.route === 'collect';
const noStore = values['no-store'] === true;
if (rawHttp && collect) throw new Error('--raw-http answers POST /v1/track only');
// Browser events come from a crowd of addresses behind one proxy, as in npm run bench.
const routeEnv: Record<string, string> = collect ? { TRACKWAY_TRUST_PROXY: '1' } : {};
const pinned = choosePinning(values);

const dir = mkdtempSync(join(tmpdir(), 'trackway-profile-'));
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const profiled = ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', dir];
/** The service on `store`, started for `use` and stopped (and its schema dropped) after. */
const withService = <T>(
  use: (service: BenchService, databaseUrl: string) => Promise<T>,
): Promise<T> => {
  const start = async (databaseUrl: string, env: Record<string, string>) => {
    const service = await startBenchService(
      databaseUrl,
      env,
      1,
      noStore ? [...profiled, ...NO_STORE_FLAGS] : profiled,
      rawHttp ? [fileURLToPath(new URL('./raw-track-server.mjs', import.meta.url))] : undefined,
    );
    try {
      return await use(service, databaseUrl);
    } finally {
      await service.stop();
    }
  };
  return store === 'sqlite'
    ? start(`sqlite:${join(dir, 'bench.db')}`, routeEnv)
    : withSchema((url) => start(url, { REDIS_URL, ...routeEnv }));
};
try {
  await withService(async (service, databaseUrl) => {
    const pid = service.running.child.pid!;
    const target: LoadOptions = collect
      ? (await collectTargets(service, connections, seconds))[0]!
      : {
          url: `${service.running.url}/v1/track`,
          headers: service.headers,
          template: purchaseTemplate(service.pixelId),
          seconds,
          connections,
        };
    await load({ ...target, seconds: 2 });
    // As npm run bench does: a fresh schema's empty-table statistics would otherwise plan the
    // insert for empty tables through the window (848 → 2,581 req/s across three runs once).
    if (store === 'postgres-redis') await analyzeSchema(databaseUrl);
    // The profile's clock is the monotonic clock process.hrtime reads, in µs: the window's
    // bounds taken here select the measured samples.
    const from = nowUs();
    const measured = await withCpu([pid], () => load({ ...target, seconds }));
    const to = nowUs();
    const rss = peakRssMb(pid);
    await service.stop(); // SIGTERM: the service drains and exits, and node writes the profile
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the service wrote no .cpuprofile');
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    if (from < profile.startTime || to > profile.endTime) {
      throw new Error('the load window is not inside the profile: clocks differ?');
    }
    const requests = measured.result.requests;
    const stages = stageTable(profile, requests, from, to);
    const rows: Array<Record<string, string>> = STAGES.map((stage) => ({
      stage,
      'µs/request': stages.perRequest[stage].toFixed(1),
      share: `${((100 * stages.perRequest[stage]) / stages.sampledPerRequest).toFixed(1)} %`,
    }));
    rows.push({
      stage: 'main thread, sampled',
      'µs/request': stages.sampledPerRequest.toFixed(1),
      share: '100 %',
    });
    rows.push({
      stage: 'whole process, /proc',
      'µs/request': measured.cpuPerRequest.toFixed(1),
      share: '',
    });
    console.log(
      `\nPOST /v1/${collect ? 'collect' : 'track'}, ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL + Redis'}${rawHttp ? ', bare node:http (no Fastify)' : ''}${noStore ? ', experiment: nothing stored' : ''}, ${connections} connections, ${seconds} s under --cpu-prof: ` +
        `${measured.result.requestsPerSecond} req/s, ${requests} requests, peak RSS ${rss} MB; ` +
        `${pinned ? 'server pinned to core 1, load to core 0' : 'not pinned'}\n`,
    );
    console.log(table(rows));
    // What decided the biggest stages, and what no rule knew: where to look, and where the rules
    // may need a line.
    const biggest = [...STAGES]
      .filter((s) => s !== 'unattributed')
      .sort((a, b) => stages.perRequest[b] - stages.perRequest[a])
      .slice(0, 3);
    for (const stage of [...biggest, 'unattributed' as const]) {
      console.log(`\n${stage}, by the frame that decided it (µs/request):`);
      for (const f of stages.frames[stage].slice(0, 8)) {
        console.log(`  ${f.us.toFixed(2).padStart(6)}  ${f.frame}`);
      }
    }
    const saved = saveResult(
      rawHttp
        ? 'profile-raw-http'
        : `profile${collect ? '-collect' : ''}${store === 'sqlite' ? '' : `-${store}`}${noStore ? '-no-store' : ''}`,
      {
        store,
        route: values.route,
        seconds,
        connections,
        pinned,
        loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
        note: values.note,
        noStore,
        requestsPerSecond: measured.result.requestsPerSecond,
        requests,
        processCpuUsPerRequest: Math.round(measured.cpuPerRequest * 10) / 10,
        peakRssMb: rss,
        stages: Object.fromEntries(
          STAGES.map((s) => [s, Math.round(stages.perRequest[s] * 10) / 10]),
        ),
        framesByStage: stages.frames,
      },
    );
    const kept = saved.replace(/\.json$/, '.cpuprofile');
    copyFileSync(join(dir, file), kept);
    console.log(`\nresults: ${saved}\nprofile: ${kept}`);
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
