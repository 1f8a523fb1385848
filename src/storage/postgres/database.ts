import pg from 'pg';
import { isStorageUnavailable, isTransactionConflict, toDomainError } from '../driver-errors.ts';
import { pendingMigrations } from '../migration-files.ts';
import { PostgresPool } from './pool.ts';
import { splitStatements } from './statements.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export interface PostgresOptions {
  /** `postgres://…` or `postgresql://…`; may carry `?schema=name` (see `parsePostgresUrl`). */
  url: string;
  /** Connections kept by this process. */
  poolSize?: number;
}

export interface ParsedPostgresUrl {
  /** The URL handed to `pg`, with Trackway's own `schema` parameter removed. */
  connectionString: string;
  /** The schema every connection works in, when one was named; created by `migrate`. */
  schema: string | null;
}

/** Plain identifiers only: the name goes into `search_path` and `CREATE SCHEMA` unquoted. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

/**
 * `?schema=name` selects a PostgreSQL schema (so several deployments, or tests, can share one
 * database). It is Trackway's parameter, not libpq's, so it is removed before the URL reaches
 * `pg`; libpq's own `?options=-c search_path=…` keeps working too.
 */
export function parsePostgresUrl(url: string): ParsedPostgresUrl {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { connectionString: url, schema: null };
  if (!SCHEMA_NAME.test(schema)) {
    throw new StorageUnavailableError(
      `DATABASE_URL: schema must be a lower-case identifier (a-z, 0-9, _), got "${schema}"`,
    );
  }
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

/** Where the URL points, without credentials: safe to print in an operator message. */
export function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

/**
 * bigint columns (custom limits) come back as numbers, as SQLite gives them: every value this
 * service keeps there is far below 2^53.
 */
/** A request's query never waits longer than this (a database that stopped answering). */
export const QUERY_TIMEOUT_MS = 10_000;
const MIGRATION_TIMEOUT_MS = 24 * 60 * 60 * 1_000;

/** A query exempt from QUERY_TIMEOUT_MS (pg reads `query_timeout` per query; its types don't). */
const untimed = (text: string, values?: unknown[]): pg.QueryConfig =>
  ({ text, values, query_timeout: MIGRATION_TIMEOUT_MS }) as pg.QueryConfig;

const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A 200 means the event is on disk (contract §3), so commits must wait for the WAL flush.
 * A server, database or role default of `synchronous_commit = off` (or `?options=` in the URL)
 * would silently answer before it; each connection raises `off` to `on`. Stronger settings
 * (`remote_write`, `remote_apply` for synchronous standbys) and `local` are left as they are,
 * and transactions that opt out on purpose (`SET LOCAL`, the webhook claim) still can.
 */
const DURABLE_COMMITS =
  "SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'";

export function createPool(options: PostgresOptions): { pool: pg.Pool; schema: string | null } {
  const { connectionString, schema } = parsePostgresUrl(options.url);
  const pool = new PostgresPool({
    connectionString,
    max: options.poolSize ?? 10,
    types: int8AsNumber,
    // Fail fast when the database is away: a request gets a 503 in seconds instead of hanging
    // on a connection that will not come, and the pool reconnects by itself when it is back.
    connectionTimeoutMillis: 3_000,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    // The search path is a startup parameter, so it costs no extra round trip per connection.
    ...(schema !== null && { options: `-c search_path=${schema}` }),
    // Awaited by the pool before it hands the new connection to anyone, so the setting is in
    // place before the first query and nothing else is sent on the connection meanwhile (a
    // query queued from the 'connect' event raced the caller's own: pg's "client is already
    // executing a query" deprecation, an error from pg 9 on).
    onConnect: async (client: pg.ClientBase) => {
      // A connection lost while checked out (mid-transaction, say) must not crash the process
      // through an unhandled 'error' event: the query in flight rejects with the error anyway,
      // and the request gets its 503.
      client.on('error', () => {});
      await client.query(DURABLE_COMMITS);
    },
  });
  // An idle connection dropped by the server (restart, failover) must not crash the process;
  // the pool replaces it and the next query reports any lasting problem.
  pool.on('error', () => {});
  return { pool, schema };
}

/** Runs of a transaction PostgreSQL aborted as a conflict, before the error reaches the caller. */
export const CONFLICT_ATTEMPTS = 3;

/**
 * Runs `work` in one transaction on one connection, rolling back if it throws. A transaction
 * aborted as a conflict (another instance took the same rows in the opposite order) is run
 * again, up to CONFLICT_ATTEMPTS times in all, so `work` must not act outside the transaction.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(pool, work);
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !isTransactionConflict(error)) throw toDomainError(error);
      // A short random pause, so the two sides of a deadlock do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

/**
 * Runs one statement as its own transaction (no BEGIN/COMMIT: PostgreSQL commits it, WAL flush
 * included, before it answers), on one connection. Like `inTransaction`, a statement aborted as
 * a conflict is run again, up to CONFLICT_ATTEMPTS times in all, and a connection that broke is
 * destroyed rather than handed to the next caller.
 */
export async function oneStatement<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  query: pg.QueryConfig,
): Promise<pg.QueryResult<R>> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      return await client.query<R>(query);
    } catch (error) {
      broken = isStorageUnavailable(error) ? (error as Error) : undefined;
      if (attempt >= CONFLICT_ATTEMPTS || !isTransactionConflict(error)) throw toDomainError(error);
    } finally {
      client.release(broken);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
  }
}

async function transactionOnce<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    // A connection that broke is destroyed rather than handed to the next request.
    broken = isStorageUnavailable(error) ? (error as Error) : undefined;
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Applies every numbered migration not yet applied, each in its own transaction, under a
 * session advisory lock: two instances starting at once queue here instead of racing to
 * create the same tables. The lock key is per schema, so separate schemas migrate in parallel.
 */
export async function migratePostgres(pool: pg.Pool, schema: string | null): Promise<string[]> {
  const client = await pool.connect();
  const lockKey = `trackway:migrate:${schema ?? ''}`;
  try {
    // Waiting for another instance's migration, or a backfill over a big table, may take far
    // longer than a request's query timeout.
    await client.query(untimed('SELECT pg_advisory_lock(hashtext($1))', [lockKey]));
    try {
      if (schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL)',
      );
      const { rows } = await client.query<{ version: string }>(
        'SELECT version FROM schema_migrations',
      );
      const applied = new Set(rows.map((r) => r.version));
      const ran: string[] = [];
      for (const { version, sql } of pendingMigrations(MIGRATIONS_DIR, applied)) {
        await client.query('BEGIN');
        try {
          // One statement per query (statements.ts: Citus plans a multi-statement string
          // as one, and refuses DDL on distributed tables sent that way).
          for (const statement of splitStatements(sql)) await client.query(untimed(statement));
          await client.query(
            'INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())',
            [version],
          );
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        }
        ran.push(version);
      }
      return ran;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
    }
  } finally {
    client.release();
  }
}
