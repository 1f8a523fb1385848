/**
 * Growth (issue 21): does ingest slow down once the database is big? Fills a database with
 * `--events` events directly (bulk SQL, not over HTTP: 20 million over HTTP would take hours),
 * then runs the pinned ingest bench (bench/track.ts) against it and against an empty one in the
 * same run, round by round beside the same baseline. Target: within 15 % of the empty figures.
 *
 * The filled database has the service's real shape: it is made and migrated by the service's
 * own CLI; events go into the real events table with all its indexes in place, spread over 50
 * pixels of 2 accounts, 8 event names and the last 90 days, with hashed user_data and a small
 * custom_data like the bench's own events; the hourly, daily and all-time counts are then
 * rebuilt by the same statements that backfilled them in their migration (004_event_counts).
 *
 *   npm run bench:growth -- --store sqlite|postgres [--events 20000000] [--file PATH]
 *                           [--schema NAME] [--fill-only] [--reuse] [--drop]
 *                           [--seconds 10] [--rounds 3] [--pin | --no-pin]
 *
 * SQLite: the file (default $TMPDIR/trackway-growth.db, several GB at 20 M) is kept for
 * re-runs (--reuse skips the fill) unless --drop. PostgreSQL: schema `bench_growth` (--schema)
 * at BENCH_DATABASE_URL, likewise kept unless --drop. Results: bench/results/growth-<store>.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { newId } from '../src/domain/ids.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: '20000000' },
    file: { type: 'string', default: join(tmpdir(), 'trackway-growth.db') },
    schema: { type: 'string', default: 'bench_growth' },
    'fill-only': { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    drop: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    pin: { type: 'boolean' },
    'no-pin': { type: 'boolean' },
  },
});
const store = values.store;
if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store sqlite|postgres');
const total = Number(values.events);
const PIXELS = 50;
const CHUNK = 500_000;
const DAY_MS = 86_400_000;
const NAMES = [
  'PageView',
  'ViewContent',
  'AddToCart',
  'InitiateCheckout',
  'Purchase',
  'Lead',
  'Search',
  'CompleteRegistration',
];
const PG_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgUrl = () => {
  const url = new URL(PG_URL);
  url.searchParams.set('schema', values.schema);
  return url.toString();
};
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));
const migration = (name: string) =>
  readFileSync(new URL(`../src/storage/${store}/migrations/${name}`, import.meta.url), 'utf8');

/** Makes an account with the service's CLI (which migrates the database first). */
function createAccount(databaseUrl: string): string {
  const run = spawnSync(
    process.execPath,
    [BIN, 'accounts', 'create', '--name', 'Growth', '--plan', 'enterprise', '--json'],
    { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`accounts create failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { account_id: string }).account_id;
}

/** The 50 pixels (id, account) the events are spread over, owned by two new accounts. */
function fillPixels(databaseUrl: string): Array<{ id: string; account: string }> {
  const accounts = [createAccount(databaseUrl), createAccount(databaseUrl)];
  return Array.from({ length: PIXELS }, (_, k) => ({
    id: newId('px'),
    account: accounts[k % accounts.length]!,
  }));
}

/** The counts' backfill statements of migration 004, run on the filled events. */
const countBackfill = () => {
  const text = migration('004_event_counts.sql');
  return text.slice(text.indexOf('INSERT INTO event_counts ('));
};

const progress = (done: number, started: number) =>
  console.error(
    `  ${done.toLocaleString('en')} / ${total.toLocaleString('en')} events, ` +
      `${Math.round(done / ((Date.now() - started) / 1000)).toLocaleString('en')}/s`,
  );

function fillSqlite(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  const pixels = fillPixels(`sqlite:${file}`);
  const db = new Database(file);
  // Fill speed only: the service sets its own pragmas when it opens the file.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const now = Date.now();
  const insertPixel = db.prepare(
    `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at,
       updated_at, publishable_key)
     VALUES (?, ?, ?, ?, ?, 'active', ?, ?, 'tw_pub_' || lower(hex(randomblob(12))))`,
  );
  db.exec('CREATE TEMP TABLE fill_pixels (k INTEGER PRIMARY KEY, id TEXT, account_id TEXT)');
  const insertFillPixel = db.prepare('INSERT INTO fill_pixels VALUES (?, ?, ?)');
  db.exec('CREATE TEMP TABLE fill_names (k INTEGER PRIMARY KEY, name TEXT)');
  const insertName = db.prepare('INSERT INTO fill_names VALUES (?, ?)');
  db.transaction(() => {
    pixels.forEach((p, k) => {
      insertPixel.run(
        p.id,
        p.account,
        `Shop ${k}`,
        `shop${k}.example.com`,
        `t.shop${k}.example.com`,
        now,
        now,
      );
      insertFillPixel.run(k, p.id, p.account);
    });
    for (const [k, name] of NAMES.entries()) insertName.run(k, name);
  })();
  const hex = 'lower(hex(randomblob(32)))';
  // Timestamps scattered over the span by a multiplicative hash of the row number.
  const TS = '(:end - (i * 2654435761) % :span)';
  const chunk = db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT :from UNION ALL SELECT i + 1 FROM n WHERE i + 1 < :to)
     INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
       received_at, url, user_data, custom_data)
     SELECT p.account_id, p.id, 'fill-' || i, f.name, (i % 10000) / 100.0, 'USD', ${TS},
       ${TS} + 150,
       'https://shop.example.com/products/' || (i % 5000),
       json_object('email', ${hex}, 'phone', ${hex}, 'first_name', ${hex}, 'country', ${hex}),
       json_object('order_id', 'order-' || i, 'items', i % 7)
       FROM n
       JOIN fill_pixels p ON p.k = n.i % ${PIXELS}
       JOIN fill_names f ON f.k = (n.i / ${PIXELS}) % ${NAMES.length}`,
  );
  const started = Date.now();
  for (let from = 0; from < total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK);
    db.transaction(() => chunk.run({ from, to, end: now - 3_600_000, span: 90 * DAY_MS }))();
    progress(to, started);
  }
  db.exec('DELETE FROM event_counts; DELETE FROM event_counts_daily; DELETE FROM event_totals;');
  db.exec(countBackfill());
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function fillPostgres(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${values.schema} CASCADE`);
  await admin.end();
  const pixels = fillPixels(pgUrl());
  const db = new pg.Client({
    connectionString: PG_URL,
    options: `-c search_path=${values.schema}`,
  });
  await db.connect();
  try {
    await db.query('SET synchronous_commit = off');
    await db.query(
      `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at,
         updated_at, publishable_key)
       SELECT id, account, 'Shop ' || k, 'shop' || k || '.example.com',
         't.shop' || k || '.example.com', 'active', now(), now(),
         'tw_pub_' || substr(md5(id), 1, 24)
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p (id, account, k)`,
      [pixels.map((p) => p.id), pixels.map((p) => p.account)],
    );
    const hex = 'md5(random()::text) || md5(random()::text)';
    // Timestamps scattered over the span by a multiplicative hash of the row number (as SQLite).
    const ts = 'to_timestamp(($6::bigint - (i * 2654435761) % $7::bigint) / 1000.0)';
    const end = Date.now() - 3_600_000;
    const span = 90 * DAY_MS;
    const started = Date.now();
    for (let from = 0; from < total; from += CHUNK) {
      const to = Math.min(total, from + CHUNK);
      await db.query(
        `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency,
           timestamp, received_at, url, user_data, custom_data)
         SELECT ($4::text[])[1 + i % ${PIXELS}], ($3::text[])[1 + i % ${PIXELS}], 'fill-' || i,
           ($5::text[])[1 + (i / ${PIXELS}) % ${NAMES.length}], (i % 10000) / 100.0, 'USD', ${ts},
           ${ts} + interval '150 milliseconds', 'https://shop.example.com/products/' || (i % 5000),
           json_build_object('email', ${hex}, 'phone', ${hex}, 'first_name', ${hex},
             'country', ${hex}),
           json_build_object('order_id', 'order-' || i, 'items', i % 7)
           FROM generate_series($1::bigint, $2::bigint - 1) AS i`,
        [from, to, pixels.map((p) => p.id), pixels.map((p) => p.account), NAMES, end, span],
      );
      progress(to, started);
    }
    await db.query('TRUNCATE event_counts, event_counts_daily, event_totals');
    await db.query(countBackfill());
    await db.query('VACUUM ANALYZE events');
  } finally {
    await db.end();
  }
}

async function drop(): Promise<void> {
  if (store === 'sqlite') {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${values.file}${suffix}`, { force: true });
    return;
  }
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${values.schema} CASCADE`);
  await admin.end();
}

const filledBefore = store === 'sqlite' ? existsSync(values.file) : true;
if (!values.reuse || !filledBefore) {
  console.error(`filling ${total.toLocaleString('en')} events into ${store}`);
  const started = Date.now();
  if (store === 'sqlite') fillSqlite(values.file);
  else await fillPostgres();
  console.error(`filled in ${Math.round((Date.now() - started) / 1000)} s`);
}
try {
  if (!values['fill-only']) {
    const modes =
      store === 'sqlite' ? 'sqlite,sqlite-filled' : 'postgres-redis,postgres-redis-filled';
    const filled =
      store === 'sqlite' ? ['--filled-sqlite', values.file] : ['--filled-schema', values.schema];
    const pin = values['no-pin'] ? ['--no-pin'] : values.pin ? ['--pin'] : [];
    const bench = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('./track.ts', import.meta.url)),
        '--modes',
        modes,
        ...filled,
        '--seconds',
        values.seconds,
        '--rounds',
        values.rounds,
        '--out',
        `growth-${store}`,
        '--note',
        `filled database: ${total.toLocaleString('en')} events stored before the run`,
        ...pin,
      ],
      { stdio: 'inherit' },
    );
    process.exitCode = bench.status ?? 1;
  }
} finally {
  if (values.drop) await drop();
}
