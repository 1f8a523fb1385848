/**
 * Contract §8, held in the statements: every statement the PostgreSQL store sends that touches
 * a table growing with traffic (growing-tables.ts) names account_id, so once the tables are
 * distributed by account it filters or joins on the distribution column and goes to one shard
 * (or, joined, stays colocated) instead of every shard.
 *
 * The store suites (and the forwarding worker's) run again here on PostgreSQL only, with every
 * query the pg driver is handed recorded with the place in the code that sent it. Statements a
 * test file sends itself (fixtures, checks) and the migrations' DDL are left out: the rule is
 * for the store's own statements.
 */
import assert from 'node:assert/strict';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresAvailable } from '../../test/harness.ts';
import { GROWING_TABLES } from './growing-tables.ts';

const HERE = fileURLToPath(import.meta.url);

/**
 * Where a statement came from: the first frame of its stack past the driver and the pool's own
 * `query`, 'migration' for the migration runner's, or null when no frame of ours shows (the
 * pool handing a client the statement it was given: recorded when the pool was asked).
 */
function origin(stack: string): string | null {
  for (const line of stack.split('\n').slice(1)) {
    if (/node_modules|node:|PostgresPool\.(query|connect)/.test(line)) continue;
    if (line.includes('migratePostgres')) return 'migration';
    const at = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/.exec(line.trim())?.[1];
    if (at === undefined || at.includes(HERE)) continue;
    return at;
  }
  return null;
}

/** Statements that are not the store's reads and writes. */
const SKIPPED =
  /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET |SELECT 1\b|SELECT set_config|SELECT pg_advisory|LISTEN|CREATE |ALTER |DROP |INSERT INTO schema_migrations|SELECT version FROM schema_migrations)/i;

const TOUCHES = new RegExp(
  `\\b(?:from|join|into|update|using)\\s+(?:only\\s+)?"?(${GROWING_TABLES.join('|')})"?(?![\\w.])`,
  'gi',
);

const seen = new Map<string, { tables: Set<string>; from: string }>();

function record(text: unknown, stack: string): void {
  if (typeof text !== 'string' || SKIPPED.test(text)) return;
  const from = origin(stack);
  // A test's own statement (fixtures, assertions), a migration's, or one the pool sends on a
  // caller's behalf (pool.query hands it to a client later: recorded when the pool was asked).
  if (from === null || from === 'migration' || from.endsWith('.test.ts')) return;
  const tables = new Set([...text.matchAll(TOUCHES)].map((m) => m[1]!.toLowerCase()));
  if (tables.size === 0) return;
  const normal = text.replace(/\s+/g, ' ').trim();
  if (!seen.has(normal)) seen.set(normal, { tables, from: from.replace(/^.*\/src\//, 'src/') });
}

if (await postgresAvailable()) {
  const poolQuery = pg.Pool.prototype.query;
  const clientQuery = pg.Client.prototype.query;
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads pass through untouched
  pg.Pool.prototype.query = function (this: pg.Pool, ...args: any[]) {
    record(typeof args[0] === 'string' ? args[0] : args[0]?.text, new Error().stack ?? '');
    return (poolQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof poolQuery;
  // biome-ignore lint/suspicious/noExplicitAny: see above
  pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
    record(typeof args[0] === 'string' ? args[0] : args[0]?.text, new Error().stack ?? '');
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof clientQuery;

  process.env['TRACKWAY_TEST_STORES'] = 'postgres,postgres-per-account';
  await import('./store.contract.test.ts');
  await import('./lifecycle.contract.test.ts');
  await import('./match-keys.contract.test.ts');
  await import('./dashboard.contract.test.ts');
  await import('./diagnostics.contract.test.ts');
  await import('../delivery/forwarding-worker.test.ts');

  after(() => {
    pg.Pool.prototype.query = poolQuery;
    pg.Client.prototype.query = clientQuery;
    assert.ok(seen.size >= 40, `only ${seen.size} statements on growing tables were seen`);
    const unscoped = [...seen]
      .filter(([text]) => !/\baccount_id\b/.test(text))
      .map(([text, { tables, from }]) => `${from} [${[...tables].join(', ')}]: ${text}`);
    assert.deepEqual(
      unscoped,
      [],
      `statements on growing tables that never name account_id:\n${unscoped.join('\n\n')}`,
    );
  });
}
