/**
 * The retention purge (contract §15, issue 22): how long it takes to purge a month of N events,
 * and what it does to ingest while it runs.
 *
 * 1. Purge time, one month of N events (default 1,000,000) on one pixel, past retention:
 *    - batched (what ships, both stores): `purgeExpired`, transactions of 1,000 rows through
 *      the (account, pixel, timestamp) index, each taking its events off the count tables;
 *    - partitioned (PostgreSQL, an experiment): the same month in `events_p`, a copy of the
 *      events table partitioned by month on `timestamp`, purged by detaching and dropping the
 *      month's partition, and taking the month's buckets off the count tables in one statement
 *      each (a drop cannot return rows, so the counts come from the buckets, not from events).
 * 2. Ingest during the purge, pinned like `npm run bench` (server on core 1, wrk on core 0):
 *    the real server (`trackway serve`) with the month loaded and the account's retention set;
 *    its purge job starts 30 s after start (PURGE_FIRST_AFTER_MS). POST /v1/track is loaded
 *    in rounds before that (before), then while the purge runs (during: a round counts only if
 *    events past retention were still left when it ended), then after. PostgreSQL's partitioned
 *    variant: the server ingests into the real events table while this process drops a month
 *    partition of `events_p` in the same database (the server's insert cannot target a
 *    partitioned table: the dedup key (pixel_id, event_id) would have to include `timestamp`);
 *    that shows the drop's cost to the database, not lock waits on a shared table.
 *
 *   npm run bench:purge -- [--events 1000000] [--store both|sqlite|postgres] [--seconds 5]
 *     [--rounds 3] [--connections 100] [--pin | --no-pin] [--skip-ingest] [--skip-times]
 *     [--skip-partition]
 *
 * PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), each
 * part in a fresh schema, dropped afterwards.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { PURGE_FIRST_AFTER_MS, purgeExpired } from '../src/domain/lifecycle/retention.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import {
  choosePinning,
  type LoadResult,
  load,
  median,
  PIN_OPTIONS,
  purchaseTemplate,
  saveResult,
  startProcess,
  table,
  withSchema,
} from './lib.ts';
import { addPixel } from './store-fixture.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    store: { type: 'string', default: 'both' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '100' },
    'skip-ingest': { type: 'boolean', default: false },
    // Only the ingest part, or only the shipped (batched) method.
    'skip-times': { type: 'boolean', default: false },
    'skip-partition': { type: 'boolean', default: false },
    ...PIN_OPTIONS,
  },
});
const EVENTS = Number(values.events);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const pinned = choosePinning(values);
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));
const DAY_MS = 86_400_000;
const RETENTION_DAYS = 90;
/** The purged month: 30 days ending 120 days ago, whole UTC days; the next month is kept. */
const MONTH_END = Math.floor(Date.now() / DAY_MS) * DAY_MS - 120 * DAY_MS;
const MONTH_START = MONTH_END - 30 * DAY_MS;
/** Spacing of the month's events, in ms (1,000,000 events: one every 2.6 s). */
const STEP = Math.floor((MONTH_END - MONTH_START) / EVENTS);
const CUTOFF = Date.now() - RETENTION_DAYS * DAY_MS;

function cli(args: string[], env: Record<string, string>): string {
  const run = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`trackway ${args.join(' ')} failed: ${run.stderr}`);
  return run.stdout;
}

interface Seeded {
  accountId: string;
  apiKey: string;
  pixelId: string;
}

/**
 * An enterprise account with limits no run reaches and the retention set, made by the CLI as
 * an operator would, and one pixel.
 */
async function seed(databaseUrl: string, store: SqliteStore | PostgresStore): Promise<Seeded> {
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  const made = JSON.parse(
    cli(['accounts', 'create', '--name', 'Bench', '--plan', 'enterprise', '--json'], env),
  ) as { account_id: string; api_key: string };
  cli(
    [
      'plans',
      'set',
      '--account',
      made.account_id,
      '--requests-per-minute',
      '1000000000',
      '--daily-limit',
      '1000000000000',
      '--retention-days',
      String(RETENTION_DAYS),
    ],
    env,
  );
  const pixelId = await addPixel(store, made.account_id, {
    name: 'Old',
    domain: 'old.example.com',
  });
  return { accountId: made.account_id, apiKey: made.api_key, pixelId };
}

const NAMES = ['Purchase', 'PageView', 'ViewContent', 'AddToCart', 'Lead'];
const nameCase = (column: string) =>
  `CASE ${column} % ${NAMES.length} ${NAMES.map((n, i) => `WHEN ${i} THEN '${n}'`).join(' ')} END`;

// ---------------------------------------------------------------- SQLite

function loadSqlite(store: SqliteStore, s: Seeded): void {
  store.db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @last)
       INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data)
       SELECT @accountId, @pixelId, 'old-' || i, ${nameCase('i')}, 49.99, 'USD',
         @t0 + i * @step, @t0 + i * @step, 'https://old.example.com/p', NULL, NULL, NULL,
         '{"em":"0000000000000000000000000000000000000000000000000000000000000000"}',
         '{"order":"o-1"}'
       FROM n`,
    )
    .run({
      last: EVENTS - 1,
      accountId: s.accountId,
      pixelId: s.pixelId,
      t0: MONTH_START,
      step: STEP,
    });
  // Counts as the insert path keeps them (as bench/read-events.ts fills them).
  store.db.exec(
    `INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n, value_sum)
     SELECT pixel_id, account_id, event_name, timestamp / 3600000 AS hour, count(*),
            coalesce(sum(value), 0)
       FROM events WHERE pixel_id = '${s.pixelId}' GROUP BY pixel_id, account_id, event_name, hour;
     INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n, value_sum)
     SELECT pixel_id, account_id, event_name, hour / 24 AS day, sum(n), sum(value_sum)
       FROM event_counts WHERE pixel_id = '${s.pixelId}' GROUP BY pixel_id, account_id, event_name, day;
     INSERT INTO event_totals (pixel_id, account_id, event_name, n)
     SELECT pixel_id, account_id, event_name, sum(n)
       FROM event_counts WHERE pixel_id = '${s.pixelId}' GROUP BY pixel_id, account_id, event_name;
     ANALYZE;`,
  );
}

async function sqliteFile(): Promise<{ url: string; file: string; done: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-purge-'));
  const file = join(dir, 'purge.db');
  return { url: `sqlite:${file}`, file, done: () => rmSync(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------- PostgreSQL

/** The load's big statements run longer than the store's 10 s query timeout allows requests. */
const bulk = (db: pg.Pool | pg.Client, text: string, params?: unknown[]) =>
  db.query({ text, values: params, query_timeout: 3_600_000 } as pg.QueryConfig);

async function loadPostgres(pool: pg.Pool, s: Seeded, table = 'events'): Promise<void> {
  for (let from = 0; from < EVENTS; from += 500_000) {
    const to = Math.min(EVENTS, from + 500_000) - 1;
    await bulk(
      pool,
      `INSERT INTO ${table} (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data)
       SELECT $1, $2, 'old-' || i, ${nameCase('i')}, 49.99, 'USD',
         to_timestamp(($3::bigint + i * $6::bigint) / 1000.0),
         to_timestamp(($3::bigint + i * $6::bigint) / 1000.0),
         'https://old.example.com/p', NULL, NULL, NULL,
         '{"em":"0000000000000000000000000000000000000000000000000000000000000000"}'::json,
         '{"order":"o-1"}'::json
       FROM generate_series($4::bigint, $5::bigint) AS i`,
      [s.accountId, s.pixelId, MONTH_START, from, to, STEP],
    );
  }
  await bulk(
    pool,
    `INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n, value_sum)
     SELECT pixel_id, account_id, event_name, floor(extract(epoch FROM timestamp) / 3600)::bigint,
            count(*), coalesce(sum(value), 0)
       FROM ${table} WHERE pixel_id = $1 GROUP BY 1, 2, 3, 4`,
    [s.pixelId],
  );
  await bulk(
    pool,
    `INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n, value_sum)
     SELECT pixel_id, account_id, event_name, floor(hour / 24.0)::bigint, sum(n), sum(value_sum)
       FROM event_counts WHERE pixel_id = $1 GROUP BY 1, 2, 3, 4`,
    [s.pixelId],
  );
  await bulk(
    pool,
    `INSERT INTO event_totals (pixel_id, account_id, event_name, n)
     SELECT pixel_id, account_id, event_name, sum(n)
       FROM event_counts WHERE pixel_id = $1 GROUP BY 1, 2, 3`,
    [s.pixelId],
  );
  await bulk(pool, `VACUUM ANALYZE ${table}, event_counts, event_counts_daily, event_totals`);
}

const monthName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '_');

/**
 * `events_p`: the events table's columns and indexes, partitioned by month on `timestamp`, with
 * a partition for the purged month and one for the month after it. The primary key and the
 * dedup key must include the partition key, which is the conversion's real cost (see
 * docs/decisions.md).
 */
async function createPartitioned(pool: pg.Pool): Promise<string> {
  await pool.query(`
    CREATE TABLE events_p (
      seq bigint GENERATED ALWAYS AS IDENTITY,
      account_id text NOT NULL, pixel_id text NOT NULL, event_id text NOT NULL,
      event_name text NOT NULL, value double precision, currency text,
      timestamp timestamptz NOT NULL, received_at timestamptz NOT NULL,
      url text, referrer text, title text, search_string text, user_data json, custom_data json,
      PRIMARY KEY (seq, timestamp),
      CONSTRAINT events_p_dedup UNIQUE (pixel_id, event_id, timestamp)
    ) PARTITION BY RANGE (timestamp);
    CREATE INDEX events_p_by_time ON events_p (pixel_id, timestamp DESC, seq DESC) INCLUDE (account_id);
    CREATE INDEX events_p_by_name ON events_p (pixel_id, event_name, timestamp DESC, seq DESC) INCLUDE (account_id);`);
  const old = `events_p_${monthName(MONTH_START)}`;
  await pool.query(
    `CREATE TABLE ${old} PARTITION OF events_p
       FOR VALUES FROM (to_timestamp(${MONTH_START / 1000})) TO (to_timestamp(${MONTH_END / 1000}))`,
  );
  await pool.query(
    `CREATE TABLE events_p_rest PARTITION OF events_p
       FOR VALUES FROM (to_timestamp(${MONTH_END / 1000})) TO (MAXVALUE)`,
  );
  return old;
}

/**
 * The partitioned purge: the month's buckets off the totals, then off the hourly and daily
 * counts, in one transaction; then the partition detached (CONCURRENTLY: no lock that stops
 * inserts into the other partitions) and dropped. The month is whole UTC days, so its hours
 * and days are whole buckets.
 */
async function purgePartition(pool: pg.Pool, partition: string): Promise<void> {
  const firstHour = MONTH_START / 3_600_000;
  const endHour = MONTH_END / 3_600_000;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `UPDATE event_totals t SET n = t.n - d.n
         FROM (SELECT pixel_id, account_id, event_name, sum(n) AS n FROM event_counts
                WHERE hour >= $1 AND hour < $2 GROUP BY 1, 2, 3) d
        WHERE t.pixel_id = d.pixel_id AND t.account_id = d.account_id AND t.event_name = d.event_name`,
      [firstHour, endHour],
    );
    await client.query('DELETE FROM event_totals WHERE n <= 0');
    await client.query('DELETE FROM event_counts WHERE hour >= $1 AND hour < $2', [
      firstHour,
      endHour,
    ]);
    await client.query('DELETE FROM event_counts_daily WHERE day >= $1 AND day < $2', [
      firstHour / 24,
      endHour / 24,
    ]);
    await client.query('COMMIT');
    await client.query(`ALTER TABLE events_p DETACH PARTITION ${partition} CONCURRENTLY`);
    await client.query(`DROP TABLE ${partition}`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function openPostgres(url: string): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url });
  await store.migrate();
  return store;
}

// ---------------------------------------------------------------- purge time

interface TimeRow {
  store: string;
  method: string;
  events: number;
  s: string;
  'events/s': string;
}

const timeRow = (store: string, method: string, n: number, ms: number): TimeRow => ({
  store,
  method,
  events: n,
  s: (ms / 1000).toFixed(2),
  'events/s': Math.round(n / (ms / 1000)).toLocaleString('en-US'),
});

async function purgeTimeSqlite(): Promise<TimeRow> {
  const f = await sqliteFile();
  try {
    const store = SqliteStore.open(f.file);
    const s = await seed(f.url, store);
    loadSqlite(store, s);
    const started = performance.now();
    const n = await purgeExpired({ store, clock: systemClock });
    const ms = performance.now() - started;
    await store.close();
    if (n !== EVENTS) throw new Error(`sqlite purge deleted ${n}, expected ${EVENTS}`);
    return timeRow('SQLite', 'batched (1,000 a transaction)', n, ms);
  } finally {
    f.done();
  }
}

async function purgeTimePostgres(): Promise<TimeRow[]> {
  return withSchema(async (url) => {
    const store = await openPostgres(url);
    try {
      const s = await seed(url, store);
      await loadPostgres(store.pool, s);
      let started = performance.now();
      const n = await purgeExpired({ store, clock: systemClock });
      const batched = performance.now() - started;
      if (n !== EVENTS) throw new Error(`postgres purge deleted ${n}, expected ${EVENTS}`);
      // The same month, partitioned, in the same schema (the count tables start over).
      await store.pool.query(
        'TRUNCATE event_counts, event_counts_daily, event_totals; DELETE FROM account_retention',
      );
      const partition = await createPartitioned(store.pool);
      await loadPostgres(store.pool, s, 'events_p');
      started = performance.now();
      await purgePartition(store.pool, partition);
      const dropped = performance.now() - started;
      const { rows } = await store.pool.query<{ n: string }>('SELECT count(*) AS n FROM events_p');
      const left = await store.pool.query<{ n: string }>('SELECT count(*) AS n FROM event_counts');
      if (Number(rows[0]!.n) !== 0 || Number(left.rows[0]!.n) !== 0) {
        throw new Error('partition purge left events or buckets behind');
      }
      return [
        timeRow('PostgreSQL', 'batched (1,000 a transaction)', n, batched),
        timeRow('PostgreSQL', 'partition detached + dropped', EVENTS, dropped),
      ];
    } finally {
      await store.close();
    }
  });
}

// ---------------------------------------------------------------- ingest during the purge

interface IngestRow {
  store: string;
  method: string;
  phase: string;
  rounds: number;
  'req/s': number;
  'p99 ms': number;
  'non-2xx': number;
  'req/s ÷ before': string;
  /** Batched: from the purge job's start to the last old event gone, under the load. */
  'purge s': string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Loads POST /v1/track on `base` in rounds: `before` while `phase()` says so, then the rounds
 * `phase()` calls during, then `after`. Returns the rows (medians over rounds per phase).
 */
async function ingestPhases(
  storeName: string,
  method: string,
  base: string,
  headers: Record<string, string>,
  pixelId: string,
  during: { startsAt: number; left: () => Promise<boolean>; kick?: () => Promise<void> },
): Promise<IngestRow[]> {
  const template = purchaseTemplate(pixelId);
  const run = () =>
    load({
      url: `${base}/v1/track`,
      headers,
      template,
      seconds: SECONDS,
      connections: CONNECTIONS,
    });
  await load({ url: `${base}/v1/track`, headers, template, seconds: 2, connections: CONNECTIONS });
  const phases: Record<string, LoadResult[]> = { before: [], during: [], after: [] };
  for (let i = 0; i < ROUNDS; i++) phases['before']!.push(await run());
  if (Date.now() > during.startsAt)
    throw new Error('the purge started before the before rounds ended');
  await sleep(during.startsAt - Date.now());
  // When the purge was seen to end (checked every 250 ms): its duration under load.
  let ended = 0;
  const watch = setInterval(() => {
    void during.left().then((left) => {
      if (!left && ended === 0) ended = Date.now();
    });
  }, 250);
  const kicked = during.kick?.();
  for (let i = 0; i < ROUNDS * 4 && phases['during']!.length < ROUNDS; i++) {
    const r = await run();
    // A round counts as "during" only if the purge was still going when it ended.
    if (await during.left()) phases['during']!.push(r);
    else break;
  }
  await kicked;
  while (await during.left()) await sleep(250);
  await sleep(300);
  clearInterval(watch);
  const purgeSeconds = ((ended || Date.now()) - during.startsAt) / 1000;
  for (let i = 0; i < ROUNDS; i++) phases['after']!.push(await run());
  const before = median(phases['before']!.map((r) => r.requestsPerSecond));
  return Object.entries(phases).map(([phase, runs]) => {
    const rps = runs.length ? median(runs.map((r) => r.requestsPerSecond)) : Number.NaN;
    return {
      store: storeName,
      method,
      phase,
      rounds: runs.length,
      'req/s': Math.round(rps),
      'p99 ms': runs.length ? Number(median(runs.map((r) => r.p99)).toFixed(1)) : Number.NaN,
      'non-2xx': runs.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
      'req/s ÷ before': (rps / before).toFixed(2),
      'purge s': phase === 'during' && !during.kick ? purgeSeconds.toFixed(0) : '',
    };
  });
}

async function serve(databaseUrl: string) {
  return startProcess(
    process.execPath,
    [BIN, 'serve'],
    { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'warn', TRACKWAY_WORKER: 'false' },
    /Trackway is listening on (\S+)/,
  );
}

async function ingestSqlite(): Promise<IngestRow[]> {
  const f = await sqliteFile();
  try {
    const store = SqliteStore.open(f.file);
    const s = await seed(f.url, store);
    loadSqlite(store, s);
    await store.close();
    const server = await serve(f.url);
    const startsAt = Date.now() + PURGE_FIRST_AFTER_MS - 1_000;
    const reader = new Database(f.file, { readonly: true });
    const oldest = reader.prepare(
      'SELECT 1 FROM events WHERE pixel_id = ? AND timestamp < ? LIMIT 1',
    );
    try {
      return await ingestPhases('SQLite', 'batched', server.url, auth(s), s.pixelId, {
        startsAt: startsAt + 1_500,
        left: async () => oldest.get(s.pixelId, CUTOFF) !== undefined,
      });
    } finally {
      reader.close();
      await server.stop();
    }
  } finally {
    f.done();
  }
}

const auth = (s: Seeded) => ({ authorization: `Bearer ${s.apiKey}` });

async function ingestPostgresBatched(): Promise<IngestRow[]> {
  return withSchema(async (url) => {
    const store = await openPostgres(url);
    const s = await seed(url, store);
    await loadPostgres(store.pool, s);
    const server = await serve(url);
    const startsAt = Date.now() + PURGE_FIRST_AFTER_MS;
    try {
      return await ingestPhases('PostgreSQL', 'batched', server.url, auth(s), s.pixelId, {
        startsAt: startsAt + 500,
        left: async () =>
          (
            await store.pool.query(
              'SELECT 1 FROM events WHERE pixel_id = $1 AND timestamp < $2 LIMIT 1',
              [s.pixelId, new Date(CUTOFF)],
            )
          ).rowCount! > 0,
      });
    } finally {
      await server.stop();
      await store.close();
    }
  });
}

async function ingestPostgresPartitioned(): Promise<IngestRow[]> {
  return withSchema(async (url) => {
    const store = await openPostgres(url);
    const s = await seed(url, store);
    // No retention: the server's own purge job has nothing to do; the drop is this process's.
    await store.pool.query('DELETE FROM account_retention');
    const partition = await createPartitioned(store.pool);
    await loadPostgres(store.pool, s, 'events_p');
    const server = await serve(url);
    let dropped = false;
    try {
      return await ingestPhases('PostgreSQL', 'partition drop', server.url, auth(s), s.pixelId, {
        // Once the before rounds are done: no purge job to wait for.
        startsAt: Date.now() + 2_000 + ROUNDS * SECONDS * 1_000 + 3_000,
        // The drop is short: one round is "during" (it holds the drop), then it is over.
        left: async () => !dropped,
        kick: async () => {
          await sleep(1_000);
          await purgePartition(store.pool, partition);
          await sleep((SECONDS - 1) * 1_000 + 500);
          dropped = true;
        },
      });
    } finally {
      await server.stop();
      await store.close();
    }
  });
}

// ---------------------------------------------------------------- main

async function main() {
  const which = values.store;
  const sqlite = which === 'both' || which === 'sqlite';
  const postgres = which === 'both' || which === 'postgres';
  const times: TimeRow[] = [];
  if (!values['skip-times']) {
    if (sqlite) times.push(await purgeTimeSqlite());
    if (postgres) times.push(...(await purgeTimePostgres()));
    console.log(`\nPurging a month of ${EVENTS} events on one pixel\n`);
    console.log(table(times as unknown as Array<Record<string, string | number>>));
  }
  const ingest: IngestRow[] = [];
  if (!values['skip-ingest']) {
    if (sqlite) ingest.push(...(await ingestSqlite()));
    if (postgres) ingest.push(...(await ingestPostgresBatched()));
    if (postgres && !values['skip-partition']) ingest.push(...(await ingestPostgresPartitioned()));
    console.log(
      `\nPOST /v1/track before, during and after the purge (${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, medians; ${pinned ? 'pinned: server core 1, wrk core 0' : 'not pinned'})\n`,
    );
    console.log(table(ingest as unknown as Array<Record<string, string | number>>));
  }
  console.log(
    `\nresults: ${saveResult('purge', { events: EVENTS, pinned, seconds: SECONDS, rounds: ROUNDS, times, ingest })}`,
  );
}

await main();
