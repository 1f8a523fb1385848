import type pg from 'pg';
import type { WebhookEvent } from '../../domain/model.ts';
import type { CommitNotifier } from '../../domain/ports/commit-notifier.ts';
import { Committed, type Note } from '../sql/committed.ts';
import { postgresSql, type Query, type Runner, type Sql, type Step } from '../sql/query.ts';
import { inTransaction } from './database.ts';
import { translated } from './pool.ts';

type Queryable = pg.Pool | pg.PoolClient;

/** Writes emitted webhook messages with the transaction's client (outbox.ts writeOutbox). */
export type Outbox = (db: Queryable, events: WebhookEvent[]) => Promise<void>;

/**
 * Drives shared queries (sql/query.ts) on pg: each yielded statement is awaited on the pool,
 * or on the one client holding the transaction.
 */
export class PostgresRunner implements Runner {
  readonly sql: Sql = postgresSql;

  /** `notifier` is told what each piece of work committed, once it has (committed.ts). */
  constructor(
    private readonly pool: pg.Pool,
    private readonly outbox: Outbox = noOutbox,
    private readonly notifier?: CommitNotifier,
  ) {}

  /** Runs `work` outside a transaction (reads, and single statements). */
  readonly read = async <T>(work: () => Query<T>): Promise<T> => {
    const committed = new Committed();
    const result = await translated(drive(this.pool, work(), this.outbox, committed));
    committed.announce(this.notifier);
    return result;
  };

  /**
   * Runs `work` in one transaction. A conflict abort runs it again from the start (a fresh
   * generator, and a fresh record of what it did), so `work` must not act outside the
   * database.
   */
  readonly transaction = async <T>(work: () => Query<T>): Promise<T> => {
    let committed = new Committed();
    const result = await inTransaction(this.pool, (client) => {
      committed = new Committed();
      return drive(client, work(), this.outbox, committed);
    });
    committed.announce(this.notifier);
    return result;
  };

  /** The pool and the transaction helpers translate already (PostgresPool); a lost one too. */
  readonly own = async <T>(work: (note: (fact: Note) => void) => T | Promise<T>): Promise<T> => {
    const committed = new Committed();
    const result = await translated((async () => work(committed.note))());
    committed.announce(this.notifier);
    return result;
  };
}

/** Drives `query` on `db` (a pool, or a client already inside a transaction). */
export async function drive<T>(
  db: Queryable,
  query: Query<T>,
  outbox: Outbox = noOutbox,
  committed?: Committed,
): Promise<T> {
  let next = query.next();
  while (!next.done) {
    next = query.next(await step(db, next.value, outbox, committed));
  }
  return next.value;
}

async function step(
  db: Queryable,
  step: Step,
  outbox: Outbox,
  committed: Committed | undefined,
): Promise<unknown> {
  if (step.kind === 'note') return committed?.note(step.note);
  if (step.kind === 'emit') {
    committed?.note({ outbox: step.events.length > 0 });
    return outbox(db, step.events);
  }
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
