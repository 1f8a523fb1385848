import type pg from 'pg';
import type { WebhookEvent } from '../../domain/model.ts';
import { postgresSql, type Query, type Runner, type Sql, type Step } from '../sql/query.ts';
import { inTransaction } from './database.ts';

type Queryable = pg.Pool | pg.PoolClient;

/** Writes emitted webhook messages with the transaction's client (outbox.ts writeOutbox). */
export type Outbox = (db: Queryable, events: WebhookEvent[]) => Promise<void>;

/**
 * Drives shared queries (sql/query.ts) on pg: each yielded statement is awaited on the pool,
 * or on the one client holding the transaction.
 */
export class PostgresRunner implements Runner {
  readonly sql: Sql = postgresSql;

  constructor(
    private readonly pool: pg.Pool,
    private readonly outbox: Outbox = noOutbox,
  ) {}

  /** Runs `work` outside a transaction (reads, and single statements). */
  readonly read = <T>(work: () => Query<T>): Promise<T> => drive(this.pool, work(), this.outbox);

  /**
   * Runs `work` in one transaction. A conflict abort runs it again from the start (a fresh
   * generator), so `work` must not act outside the database.
   */
  readonly transaction = <T>(work: () => Query<T>): Promise<T> =>
    inTransaction(this.pool, (client) => drive(client, work(), this.outbox));
}

/** Drives `query` on `db` (a pool, or a client already inside a transaction). */
export async function drive<T>(
  db: Queryable,
  query: Query<T>,
  outbox: Outbox = noOutbox,
): Promise<T> {
  let next = query.next();
  while (!next.done) {
    next = query.next(await step(db, next.value, outbox));
  }
  return next.value;
}

async function step(db: Queryable, step: Step, outbox: Outbox): Promise<unknown> {
  if (step.kind === 'emit') return outbox(db, step.events);
  const result = await db.query(step.query.sql, step.query.parameters as unknown[]);
  if (step.kind === 'run') return result.rowCount ?? 0;
  if (step.kind === 'first') return result.rows[0];
  return result.rows;
}

function noOutbox(): Promise<never> {
  return Promise.reject(
    new Error('this runner has no outbox: construct it with one to emit webhook messages'),
  );
}
