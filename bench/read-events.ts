/**
 * GET /v1/pixels/:id/events and GET /v1/pixels/:id/stats latency on a big pixel, SQLite and
 * PostgreSQL side by side.
 *
 * Loads N events (default 5,000,000) for one pixel into each store, then starts the real
 * server (`trackway serve`, its own process, on core 1 when pinned) and times sequential
 * requests for each filter shape. Prints p50/p95 per shape and store.
 *
 * The load goes straight through SQL, generated inside the database (a recursive CTE on
 * SQLite, generate_series on PostgreSQL): through the API it would take hours and measure the
 * write path, not the read path. The pre-aggregated counts behind `total` are then filled
 * with the migration's backfill queries, as the insert path would have kept them. Events are
 * one second apart (5 M ≈ 58 days) and end at the start of the current hour, so the
 * dashboard's "last 24 hours / 7 days" see full hours; ten event names in rotation, so
 * `event_name=Purchase` matches 10 % and one UTC day matches 86,400 events. Dates in the
 * shapes are days counted from the first whole UTC day of the data.
 *
 * After the API shapes, the dashboard's overview (GET /dashboard, both periods) is timed with a
 * signed-in session: the server's answer (sequential requests, p50/p95), and, with
 * --browser (default on when /usr/bin/chromium exists), the full page in headless chromium
 * (playwright-core): navigation to the load event, then until both charts have drawn.
 *
 *   npm run bench:reads -- [--events 5000000] [--requests 200] [--store both|sqlite|postgres]
 *     [--keep] [--no-browser] [--stats-only] [--baseline <checkout>/bin/trackway.js]
 *
 * --baseline times the stats shapes on two builds over the same data, in alternating rounds
 * (baseline, this, this, baseline, …; one server at a time, started for its round), so a
 * before/after comparison shares the machine's conditions. On PostgreSQL it also reports the
 * database's CPU per request (the server's own connections, found by their client ports),
 * since a change can move work between Node and the database.
 *
 * PostgreSQL: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); the data
 * goes into a schema of its own, dropped at the end.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { chromium } from 'playwright-core';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import {
  choosePinning,
  cpuMs,
  PIN_OPTIONS,
  percentile,
  saveResult,
  startProcess,
  table,
} from './lib.ts';
import { addPixel } from './store-fixture.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '5000000' },
    requests: { type: 'string', default: '200' },
    store: { type: 'string', default: 'both' },
    // Leaves the loaded data in place (and says where), to EXPLAIN queries against it.
    keep: { type: 'boolean', default: false },
    'no-browser': { type: 'boolean', default: false },
    // Only the stats shapes and the overview (the events list shapes take most of the time).
    'stats-only': { type: 'boolean', default: false },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    ...PIN_OPTIONS,
  },
});
const pinned = choosePinning(values);
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));
const EVENTS = Number(values.events);
const REQUESTS = Number(values.requests);
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const CHROMIUM = process.env['TRACKWAY_CHROMIUM'] ?? '/usr/bin/chromium';
const BROWSER = !values['no-browser'] && existsSync(CHROMIUM);
/** The first event: EVENTS seconds before the start of the current hour, on a whole second. */
const T0 = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - EVENTS * 1000;
const FIRST_DAY = Math.ceil(T0 / DAY_MS) * DAY_MS;
/** The UTC date `n` whole days into the data (YYYY-MM-DD). */
const day = (n: number) => new Date(FIRST_DAY + n * DAY_MS).toISOString().slice(0, 10);
/** A date-time `hours` whole hours into the data. */
const at = (hours: number, ms = 0) =>
  new Date(FIRST_DAY + hours * HOUR_MS + ms).toISOString().replace('.000Z', 'Z');
const NAMES = [
  'Purchase',
  'PageView',
  'ViewContent',
  'AddToCart',
  'Lead',
  'Search',
  'Subscribe',
  'InitiateCheckout',
  'AddPaymentInfo',
  'CompleteRegistration',
];

const SHAPES: Array<{ shape: string; query: string; path?: string }> = [
  { shape: 'no filter', query: '' },
  { shape: 'event_name', query: 'event_name=Purchase' },
  { shape: 'start_date/end_date (1 day)', query: `start_date=${day(19)}&end_date=${day(19)}` },
  {
    shape: 'event_name + dates',
    query: `event_name=Purchase&start_date=${day(19)}&end_date=${day(19)}`,
  },
  { shape: 'offset=10000', query: 'offset=10000' },
  // Bounds inside an hour: two partial hours are counted from the index (3,600 rows each at
  // most), plus leftover hours and whole days from the count tables.
  {
    shape: 'mid-hour dates (2.3 days)',
    query: `start_date=${at(19 * 24 + 10, 1_800_000)}&end_date=${at(21 * 24 + 17, 2_730_500)}`,
  },
  {
    shape: 'event_name + mid-hour dates',
    query: `event_name=Purchase&start_date=${at(19 * 24 + 10, 1_800_000)}&end_date=${at(21 * 24 + 17, 2_730_500)}`,
  },
  // GET …/stats (the dashboard's charts): buckets from the count tables, ten names each.
  { path: 'stats', shape: 'stats: 24 hours', query: `start_date=${day(19)}&end_date=${day(19)}` },
  {
    path: 'stats',
    shape: 'stats: 7 days by hour',
    query: `start_date=${day(19)}&end_date=${day(25)}`,
  },
  {
    path: 'stats',
    shape: 'stats: 1,000 hours',
    query: `start_date=${at(0)}&end_date=${at(999)}`,
  },
  {
    path: 'stats',
    shape: 'stats: 57 days by day',
    query: `interval=day&start_date=${day(0)}&end_date=${day(56)}`,
  },
  {
    path: 'stats',
    shape: 'stats: 7 days, event_name',
    query: `event_name=Purchase&start_date=${day(19)}&end_date=${day(25)}`,
  },
];

interface Prepared {
  store: string;
  databaseUrl: string;
  apiKey: string;
  pixelId: string;
  cleanup(): Promise<void>;
}

/** One account and pixel through the ports, so the API key and rows are real. */
async function seedAccount(store: SqliteStore | PostgresStore) {
  const { account, apiKey } = await createAccount(
    { store, clock: systemClock },
    { name: 'Bench', plan: 'enterprise' },
  );
  const pixelId = await addPixel(store, account.id, { name: 'Big', domain: 'big.example.com' });
  return { accountId: account.id, apiKey, pixelId };
}

const nameCase = (column: string) =>
  `CASE ${column} % 10 ${NAMES.map((n, i) => `WHEN ${i} THEN '${n}'`).join(' ')} END`;

async function prepareSqlite(): Promise<Prepared> {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-reads-'));
  const file = join(dir, 'reads.db');
  const store = SqliteStore.open(file);
  const { accountId, apiKey, pixelId } = await seedAccount(store);
  const started = performance.now();
  store.db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @last)
       INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data)
       SELECT @accountId, @pixelId, 'bulk-' || i, ${nameCase('i')}, 49.99, 'USD',
         @t0 + i * 1000, @t0 + i * 1000, 'https://big.example.com/p', NULL, NULL, NULL, NULL,
         '{"order":"o-1"}'
       FROM n`,
    )
    .run({ last: EVENTS - 1, accountId, pixelId, t0: T0 });
  // The bulk load bypasses the insert path, so fill the pixel's counts the way the migration
  // backfills them (timestamps here are all after 1970: plain division is a floor).
  store.db.exec(
    `INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n, value_sum)
     SELECT pixel_id, account_id, event_name, timestamp / 3600000 AS hour, count(*),
            coalesce(sum(value), 0)
       FROM events WHERE pixel_id = '${pixelId}' GROUP BY pixel_id, account_id, event_name, hour;
     INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n, value_sum)
     SELECT pixel_id, account_id, event_name, hour / 24 AS day, sum(n), sum(value_sum)
       FROM event_counts WHERE pixel_id = '${pixelId}' GROUP BY pixel_id, account_id, event_name, day;
     INSERT INTO event_totals (pixel_id, account_id, event_name, n)
     SELECT pixel_id, account_id, event_name, sum(n)
       FROM event_counts WHERE pixel_id = '${pixelId}' GROUP BY pixel_id, account_id, event_name;`,
  );
  store.db.exec('ANALYZE');
  console.log(
    `sqlite: loaded ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  await store.close();
  return {
    store: 'SQLite',
    databaseUrl: `sqlite:${file}`,
    apiKey,
    pixelId,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The load's big statements run longer than the store's 10 s query timeout allows requests. */
function bulkQuery(pool: pg.Pool, text: string, values?: unknown[]) {
  return pool.query({ text, values, query_timeout: 3_600_000 } as pg.QueryConfig);
}

async function preparePostgres(): Promise<Prepared> {
  const base = process.env['BENCH_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_reads_${process.pid}`;
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  const store = await PostgresStore.open({ url: url.toString() });
  await store.migrate();
  const { accountId, apiKey, pixelId } = await seedAccount(store);
  const started = performance.now();
  // In chunks of a million so a slow disk shows progress.
  for (let from = 0; from < EVENTS; from += 1_000_000) {
    const to = Math.min(EVENTS, from + 1_000_000) - 1;
    await bulkQuery(
      store.pool,
      `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data)
       SELECT $1, $2, 'bulk-' || i, ${nameCase('i')}, 49.99, 'USD',
         to_timestamp(($3::bigint + i * 1000) / 1000.0), to_timestamp(($3::bigint + i * 1000) / 1000.0),
         'https://big.example.com/p', NULL, NULL, NULL, NULL, '{"order":"o-1"}'::json
       FROM generate_series($4::bigint, $5::bigint) AS i`,
      [accountId, pixelId, T0, from, to],
    );
    process.stdout.write(`postgres: ${to + 1} events\r`);
  }
  // The bulk load bypasses the insert path, so fill the pixel's counts the way the migration
  // backfills them.
  await bulkQuery(
    store.pool,
    `INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n, value_sum)
     SELECT pixel_id, account_id, event_name, floor(extract(epoch FROM timestamp) / 3600)::bigint,
            count(*), coalesce(sum(value), 0)
       FROM events WHERE pixel_id = $1 GROUP BY 1, 2, 3, 4`,
    [pixelId],
  );
  await bulkQuery(
    store.pool,
    `INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n, value_sum)
     SELECT pixel_id, account_id, event_name, floor(hour / 24.0)::bigint, sum(n), sum(value_sum)
       FROM event_counts WHERE pixel_id = $1 GROUP BY 1, 2, 3, 4`,
    [pixelId],
  );
  await bulkQuery(
    store.pool,
    `INSERT INTO event_totals (pixel_id, account_id, event_name, n)
     SELECT pixel_id, account_id, event_name, sum(n)
       FROM event_counts WHERE pixel_id = $1 GROUP BY 1, 2, 3`,
    [pixelId],
  );
  // Fresh statistics and a visibility map, as autovacuum would leave them on a live system:
  // index-only scans (the counts) depend on it.
  await bulkQuery(
    store.pool,
    'VACUUM ANALYZE events, event_counts, event_counts_daily, event_totals',
  );
  console.log(
    `postgres: loaded ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  await store.close();
  return {
    store: 'PostgreSQL',
    databaseUrl: url.toString(),
    apiKey,
    pixelId,
    cleanup: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

/**
 * The PostgreSQL backends serving a process: its TCP connections' local ports (from /proc)
 * matched to pg_stat_activity's client_port. Linux only, like cpuMs.
 */
async function backendsOf(pid: number, databaseUrl: string): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!) && f[2]!.endsWith(':1538')) {
        ports.push(Number.parseInt(f[1]!.split(':')[1]!, 16));
      }
    }
  }
  if (ports.length === 0) return [];
  const client = new pg.Client({ connectionString: databaseUrl.replace(/\?.*$/, '') });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])',
      [ports],
    );
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/** CPU ms of these processes; one that has gone counts 0. */
const cpuOf = (pids: number[]) =>
  pids.reduce((sum, pid) => {
    try {
      return sum + cpuMs(pid);
    } catch {
      return sum;
    }
  }, 0);

/** The stats shapes on the baseline build and this one, in alternating rounds. */
async function measureAgainstBaseline(p: Prepared, baseline: string) {
  const rounds = Number(values.rounds);
  const perRound = Math.max(1, Math.round(REQUESTS / rounds));
  const builds = [
    { name: 'baseline', bin: baseline },
    { name: 'this', bin: BIN },
  ];
  const shapes = SHAPES.filter((x) => x.path === 'stats');
  const acc = new Map<
    string,
    { times: number[]; cpu: number; db: number; n: number; buckets: number }
  >();
  const isPg = p.databaseUrl.startsWith('postgres');
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const server = await startProcess(
        process.execPath,
        [build.bin, 'serve'],
        { DATABASE_URL: p.databaseUrl, PORT: '0', LOG_LEVEL: 'warn', TRACKWAY_WORKER: 'false' },
        /Trackway is listening on (\S+)/,
      );
      const pid = server.child.pid!;
      try {
        for (const { shape, query } of shapes) {
          const url = `${server.url}/v1/pixels/${p.pixelId}/stats?${query}`;
          const headers = { authorization: `Bearer ${p.apiKey}` };
          const get = async () => {
            const started = performance.now();
            const res = await fetch(url, { headers });
            const body = (await res.json()) as { buckets: unknown[] };
            if (res.status !== 200) throw new Error(`${shape}: HTTP ${res.status}`);
            return { elapsed: performance.now() - started, buckets: body.buckets.length };
          };
          for (let i = 0; i < 10; i++) await get(); // warm caches and connections
          const backends = isPg ? await backendsOf(pid, p.databaseUrl) : [];
          const cpu0 = cpuMs(pid);
          const db0 = cpuOf(backends);
          const key = `${build.name}\u0000${shape}`;
          const a = acc.get(key) ?? { times: [], cpu: 0, db: 0, n: 0, buckets: 0 };
          for (let i = 0; i < perRound; i++) {
            const { elapsed, buckets } = await get();
            a.times.push(elapsed);
            a.buckets = buckets;
          }
          a.cpu += cpuMs(pid) - cpu0;
          a.db += cpuOf(backends) - db0;
          a.n += perRound;
          acc.set(key, a);
        }
      } finally {
        await server.stop();
      }
    }
  }
  const rows: Array<Record<string, string | number>> = [];
  for (const { shape } of shapes) {
    for (const build of builds) {
      const a = acc.get(`${build.name}\u0000${shape}`)!;
      a.times.sort((x, y) => x - y);
      rows.push({
        store: p.store,
        build: build.name,
        filter: shape,
        matches: a.buckets,
        'p50 ms': percentile(a.times, 50).toFixed(1),
        'p95 ms': percentile(a.times, 95).toFixed(1),
        'server CPU ms/req': (a.cpu / a.n).toFixed(1),
        'database CPU ms/req': isPg ? (a.db / a.n).toFixed(1) : '',
      });
    }
  }
  return rows;
}

async function measure(p: Prepared) {
  if (values.baseline) return measureAgainstBaseline(p, values.baseline);
  // The server in its own process (on core 1 when pinned), as it runs in production: the
  // client's parsing of large answers and its garbage collection do not stall it.
  const server = await startProcess(
    process.execPath,
    [BIN, 'serve'],
    { DATABASE_URL: p.databaseUrl, PORT: '0', LOG_LEVEL: 'warn', TRACKWAY_WORKER: 'false' },
    /Trackway is listening on (\S+)/,
  );
  // Server CPU (user + system) per request: the figure that holds when the machine is busy,
  // where wall-clock percentiles mostly measure waiting for a core.
  const pid = server.child.pid!;
  const headers = { authorization: `Bearer ${p.apiKey}` };
  const rows: Array<Record<string, string | number>> = [];
  try {
    const shapes = values['stats-only'] ? SHAPES.filter((x) => x.path === 'stats') : SHAPES;
    for (const { shape, query, path = 'events' } of shapes) {
      const url = `${server.url}/v1/pixels/${p.pixelId}/${path}${query ? `?${query}` : ''}`;
      const times: number[] = [];
      let total = 0;
      let cpuBefore = 0;
      for (let i = 0; i < REQUESTS + 20; i++) {
        if (i === 20) cpuBefore = cpuMs(pid);
        const started = performance.now();
        const res = await fetch(url, { headers });
        const body = (await res.json()) as { total?: number; buckets?: unknown[] };
        const elapsed = performance.now() - started;
        if (res.status !== 200) throw new Error(`${shape}: HTTP ${res.status}`);
        // Events matched, or buckets returned for the stats shapes.
        total = body.total ?? body.buckets?.length ?? 0;
        if (i >= 20) times.push(elapsed); // the first 20 warm caches and connections
      }
      times.sort((a, b) => a - b);
      rows.push({
        store: p.store,
        filter: shape,
        matches: total,
        'p50 ms': percentile(times, 50).toFixed(1),
        'p95 ms': percentile(times, 95).toFixed(1),
        'server CPU ms/req': ((cpuMs(pid) - cpuBefore) / REQUESTS).toFixed(1),
      });
    }
    rows.push(...(await measureOverview(p, server.url, pid)));
  } finally {
    await server.stop();
  }
  return rows;
}

/** Signs in to the dashboard with the bench key, as the browser's form does: the session cookie. */
async function signIn(base: string, apiKey: string): Promise<string> {
  const res = await fetch(`${base}/dashboard/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ api_key: apiKey }).toString(),
    redirect: 'manual',
  });
  const cookie = /tw_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (res.status !== 303 || !cookie) throw new Error(`dashboard sign-in: HTTP ${res.status}`);
  return cookie;
}

/**
 * GET /dashboard (the overview) for the big pixel, last 24 hours and last 7 days: the server's
 * answer with a session (sequential requests), then the whole page in chromium.
 */
async function measureOverview(p: Prepared, base: string, pid: number) {
  const session = await signIn(base, p.apiKey);
  const rows: Array<Record<string, string | number>> = [];
  const periods = ['24h', '7d'] as const;
  const pageUrl = (period: string) => `${base}/dashboard?pixel_id=${p.pixelId}&period=${period}`;
  for (const period of periods) {
    const times: number[] = [];
    let bytes = 0;
    let cpuBefore = 0;
    for (let i = 0; i < REQUESTS + 20; i++) {
      if (i === 20) cpuBefore = cpuMs(pid);
      const started = performance.now();
      const res = await fetch(pageUrl(period), { headers: { cookie: `tw_session=${session}` } });
      const text = await res.text();
      const elapsed = performance.now() - started;
      if (res.status !== 200 || !text.includes('overview-data')) {
        throw new Error(`overview ${period}: HTTP ${res.status}`);
      }
      bytes = text.length;
      if (i >= 20) times.push(elapsed);
    }
    times.sort((a, b) => a - b);
    rows.push({
      store: p.store,
      filter: `overview ${period}: server (GET /dashboard)`,
      matches: `${Math.round(bytes / 1024)} KB`,
      'p50 ms': percentile(times, 50).toFixed(1),
      'p95 ms': percentile(times, 95).toFixed(1),
      'server CPU ms/req': ((cpuMs(pid) - cpuBefore) / REQUESTS).toFixed(1),
    });
  }
  if (!BROWSER) return rows;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { hostname } = new URL(base);
    await context.addCookies([
      { name: 'tw_session', value: session, domain: hostname, path: '/dashboard' },
    ]);
    const page = await context.newPage();
    const loads = Math.min(REQUESTS, 30);
    for (const period of periods) {
      const times: number[] = [];
      for (let i = 0; i < loads + 3; i++) {
        const started = performance.now();
        await page.goto(pageUrl(period), { waitUntil: 'load' });
        // Chart.js draws when the page script runs; a drawn chart has its instance attached.
        await page.waitForFunction(() => {
          const w = globalThis as unknown as { Chart?: { getChart(id: string): unknown } };
          return (
            w.Chart?.getChart('events-chart') !== undefined &&
            w.Chart?.getChart('revenue-chart') !== undefined
          );
        });
        const elapsed = performance.now() - started;
        if (i >= 3) times.push(elapsed); // the first loads fill the browser's cache
      }
      times.sort((a, b) => a - b);
      rows.push({
        store: p.store,
        filter: `overview ${period}: chromium, to charts drawn`,
        matches: `${loads} loads`,
        'p50 ms': percentile(times, 50).toFixed(1),
        'p95 ms': percentile(times, 95).toFixed(1),
        'server CPU ms/req': '',
      });
    }
  } finally {
    await browser.close();
  }
  return rows;
}

async function main() {
  const which = values.store;
  const rows: Array<Record<string, string | number>> = [];
  for (const prepare of [
    ...(which === 'both' || which === 'sqlite' ? [prepareSqlite] : []),
    ...(which === 'both' || which === 'postgres' ? [preparePostgres] : []),
  ]) {
    const prepared = await prepare();
    try {
      rows.push(...(await measure(prepared)));
    } finally {
      if (values.keep) console.log(`kept: ${prepared.databaseUrl}`);
      else await prepared.cleanup();
    }
  }
  console.log(
    `\nGET /v1/pixels/:id/events and /stats, and the dashboard overview: ${EVENTS} events on one pixel, ${REQUESTS} sequential requests per row (events: limit 50)\n`,
  );
  console.log(table(rows));
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\nload average at the end: ${load}`);
  console.log(
    `\nresults: ${saveResult('read-events', { events: EVENTS, requests: REQUESTS, pinned, baseline: values.baseline ?? null, load, rows })}`,
  );
}

await main();
