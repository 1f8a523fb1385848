import type pg from 'pg';
import { postgresSql, type Query, type Sql, type Step } from '../sql/query.ts';
import { inTransaction } from './database.ts';

type Queryable = pg.Pool | pg.PoolClient;

/**
 * Drives shared queries (sql/query.ts) on pg: each yielded statement is awaited on the pool,
 * or on the one client holding the transaction.
 */
export class PostgresRunner {
  readonly sql: Sql = postgresSql;

  constructor(private readonly pool: pg.Pool) {}

  /** Runs `work` outside a transaction (reads, and single statements). */
  read<T>(work: () => Query<T>): Promise<T> {
    return drive(this.pool, work());
  }

  /**
   * Runs `work` in one transaction. A conflict abort runs it again from the start (a fresh
   * generator), so `work` must not act outside the database.
   */
  transaction<T>(work: () => Query<T>): Promise<T> {
    return inTransaction(this.pool, (client) => drive(client, work()));
  }
}

/** Drives `query` on `db` (a pool, or a client already inside a transaction). */
export async function drive<T>(db: Queryable, query: Query<T>): Promise<T> {
  let next = query.next();
  while (!next.done) {
    next = query.next(await step(db, next.value));
  }
  return next.value;
}

async function step(db: Queryable, step: Step): Promise<unknown> {
  const result = await db.query(step.query.sql, step.query.parameters as unknown[]);
  if (step.kind === 'run') return result.rowCount ?? 0;
  if (step.kind === 'first') return result.rows[0];
  return result.rows;
}
