/**
 * The storage seam's cost per call (issue 16): a shared query built and compiled by Kysely on
 * every call, the same statement compiled once (`prepared`, sql/query.ts), and hand-written
 * SQL text, for two keyed reads that follow requests (findByKeyHash, getPixel), on SQLite and
 * PostgreSQL. Reports the least process CPU µs per call over the rounds (user + system, so pg's driver work counts but
 * the server's does not) and, apart, Kysely's build-and-compile alone.
 *
 *   npm run bench:seam -- [--calls 10000] [--rounds 3] [--postgres postgres://postgres@127.0.0.1:5432/test]
 */

import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hashApiKey } from '../src/domain/accounts/api-key.ts';
import { PostgresRunner } from '../src/storage/postgres/runner.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { findByKeyHash } from '../src/storage/queries/accounts.ts';
import { getPixel } from '../src/storage/queries/pixels.ts';
import {
  type AccountRow,
  type PixelRow,
  sqliteCodec,
  toAccount,
  toPixel,
} from '../src/storage/rows.ts';
import {
  first,
  postgresSql,
  type Query,
  type Runner,
  type Sql,
  sqliteSql,
} from '../src/storage/sql/query.ts';
import { SqliteRunner } from '../src/storage/sqlite/runner.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import { accountWithPixel } from './store-fixture.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

// The same statements as queries/accounts.ts and queries/pixels.ts, built on every call.
function* findByKeyHashPerCall(db: Sql, hash: string): Query<unknown> {
  const row = yield* first(
    db.q
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .selectAll('a')
      .select(['k.id as key_id', 'k.scope'])
      .where('k.key_hash', '=', hash)
      .where('k.revoked_at', 'is', null),
  );
  if (!row) return null;
  const { key_id, scope, ...account } = row;
  return { account: toAccount(db.codec, account as AccountRow), keyId: key_id, scope };
}

function* getPixelPerCall(db: Sql, accountId: string, pixelId: string): Query<unknown> {
  const row = yield* first(
    db.q
      .selectFrom('pixels')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', pixelId),
  );
  return row ? toPixel(db.codec, row as PixelRow) : null;
}

const HASH_SQL = `SELECT a.*, k.id AS key_id, k.scope FROM api_keys k JOIN accounts a ON a.id = k.account_id
  WHERE k.key_hash = ? AND k.revoked_at IS NULL`;
const PIXEL_SQL = 'SELECT * FROM pixels WHERE account_id = ? AND id = ?';
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

/** CPU µs per call of `call`, after a warm-up of a tenth as many. */
async function cpuPerCall(call: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < CALLS / 10; i++) await call();
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await call();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

interface Fixture {
  runner: Runner;
  raw: {
    hash: (hash: string) => Promise<unknown>;
    pixel: (a: string, p: string) => Promise<unknown>;
  };
  hash: string;
  accountId: string;
  pixelId: string;
}

async function measure(name: string, f: Fixture): Promise<void> {
  const { runner, hash, accountId, pixelId } = f;
  const db = runner.sql;
  // Each path must find the rows, or it measures a miss.
  for (const found of [
    await runner.read(() => findByKeyHash(db, hash)),
    await runner.read(() => findByKeyHashPerCall(db, hash)),
    await runner.read(() => getPixel(db, accountId, pixelId)),
    await runner.read(() => getPixelPerCall(db, accountId, pixelId)),
    await f.raw.hash(hash),
    await f.raw.pixel(accountId, pixelId),
  ]) {
    if (!found) throw new Error(`${name}: a path found nothing`);
  }
  const rows = [
    ['findByKeyHash', 'Kysely per call', () => runner.read(() => findByKeyHashPerCall(db, hash))],
    ['findByKeyHash', 'prepared (compiled once)', () => runner.read(() => findByKeyHash(db, hash))],
    ['findByKeyHash', 'raw SQL text', () => f.raw.hash(hash)],
    [
      'getPixel',
      'Kysely per call',
      () => runner.read(() => getPixelPerCall(db, accountId, pixelId)),
    ],
    [
      'getPixel',
      'prepared (compiled once)',
      () => runner.read(() => getPixel(db, accountId, pixelId)),
    ],
    ['getPixel', 'raw SQL text', () => f.raw.pixel(accountId, pixelId)],
  ] as const;
  // Rounds, every path in each, and the least per path: the first paths run must not pay the
  // warm-up (JIT, the pool's connection) for the others.
  const best = rows.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, [, , call]] of rows.entries())
      best[i] = Math.min(best[i]!, await cpuPerCall(call));
  }
  for (const [i, [query, path]] of rows.entries()) {
    console.log(
      `${name.padEnd(13)} ${query.padEnd(14)} ${path.padEnd(25)} ${best[i]!.toFixed(1).padStart(7)} µs/call`,
    );
  }
}

async function fixture(store: SqliteStore | PostgresStore) {
  const { apiKey, accountId, pixelId } = await accountWithPixel(store);
  return { hash: hashApiKey(apiKey), accountId, pixelId };
}

// Kysely alone: what building and compiling costs, with no database.
for (const db of [sqliteSql, postgresSql]) {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    best = Math.min(best, await cpuPerCall(() => findByKeyHashPerCall(db, 'h').next()));
  }
  const label = `kysely/${db.dialect === 'sqlite' ? 'sqlite' : 'pg'}`;
  console.log(
    `${label.padEnd(13)} ${'findByKeyHash'.padEnd(14)} ${'build + compile only'.padEnd(25)} ${best.toFixed(1).padStart(7)} µs/call`,
  );
}

{
  const file = join(tmpdir(), `trackway-seam-bench-${process.pid}.db`);
  const store = SqliteStore.open(file);
  try {
    const ids = await fixture(store);
    const hash = store.db.prepare(HASH_SQL);
    const pixel = store.db.prepare(PIXEL_SQL);
    await measure('sqlite', {
      ...ids,
      runner: new SqliteRunner(store.db),
      raw: {
        hash: async (h) => {
          const row = hash.get(h) as (AccountRow & { key_id: string; scope: string }) | undefined;
          return row ? { account: toAccount(sqliteCodec, row), keyId: row.key_id } : null;
        },
        pixel: async (a, p) => {
          const row = pixel.get(a, p) as PixelRow | undefined;
          return row ? toPixel(sqliteCodec, row) : null;
        },
      },
    });
  } finally {
    await store.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }
}

{
  const schema = `bench_seam_${process.pid}`;
  const url = `${values.postgres}${values.postgres.includes('?') ? '&' : '?'}schema=${schema}`;
  const store = await PostgresStore.open({ url, poolSize: 1 });
  try {
    await store.migrate();
    const ids = await fixture(store);
    const runner = new PostgresRunner(store.pool);
    const codec = runner.sql.codec;
    await measure('postgres', {
      ...ids,
      runner,
      raw: {
        hash: async (h) => {
          const { rows } = await store.pool.query(numbered(HASH_SQL), [h]);
          const row = rows[0];
          return row ? { account: toAccount(codec, row), keyId: row.key_id } : null;
        },
        pixel: async (a, p) => {
          const { rows } = await store.pool.query(numbered(PIXEL_SQL), [a, p]);
          return rows[0] ? toPixel(codec, rows[0]) : null;
        },
      },
    });
  } finally {
    await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await store.close();
  }
}
