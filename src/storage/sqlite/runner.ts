import type { Statement } from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { WebhookEvent } from '../../domain/model.ts';
import { type Query, type Runner, type Sql, type Step, sqliteSql } from '../sql/query.ts';
import type { SqliteDatabase } from './database.ts';

/**
 * Drives shared queries (sql/query.ts) on better-sqlite3: synchronously, so a transaction is
 * one `db.transaction` call that nothing else on the event loop can interleave with.
 */
export class SqliteRunner implements Runner {
  readonly sql: Sql = sqliteSql;
  private readonly statements = new Map<string, Statement>();

  /** `outbox` writes what a query `emit`s, inside its transaction (webhooks.ts outboxWriter). */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: (events: WebhookEvent[]) => void = noOutbox,
  ) {}

  /** Runs `work` outside a transaction (reads, and single statements). */
  readonly read = <T>(work: () => Query<T>): Promise<T> => {
    try {
      return Promise.resolve(this.drive(work()));
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** Runs `work` in one IMMEDIATE transaction, committed (and flushed) before resolving. */
  readonly transaction = <T>(work: () => Query<T>): Promise<T> => {
    try {
      return Promise.resolve(this.db.transaction(() => this.drive(work())).immediate());
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** Drives `query` to its end synchronously; for callers already inside a transaction. */
  drive<T>(query: Query<T>): T {
    let next = query.next();
    while (!next.done) {
      next = query.next(this.step(next.value));
    }
    return next.value;
  }

  private step(step: Step): unknown {
    if (step.kind === 'emit') return this.outbox(step.events);
    const statement = this.prepare(step.query);
    const params = step.query.parameters.map(bindable);
    if (step.kind === 'run') return statement.run(...params).changes;
    if (step.kind === 'first') return statement.get(...params);
    return statement.all(...params);
  }

  private prepare(query: CompiledQuery): Statement {
    let statement = this.statements.get(query.sql);
    if (!statement) {
      statement = this.db.prepare(query.sql);
      this.statements.set(query.sql, statement);
    }
    return statement;
  }
}

function noOutbox(): never {
  throw new Error('this runner has no outbox: construct it with one to emit webhook messages');
}

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; never booleans or dates. */
function bindable(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return value;
}
