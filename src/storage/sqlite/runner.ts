import type { Statement } from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { WebhookEvent } from '../../domain/model.ts';
import { toDomainError } from '../driver-errors.ts';
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
  readonly read = <T>(work: () => Query<T>): Promise<T> => this.own(() => this.drive(work()));

  /** Runs `work` in one IMMEDIATE transaction, committed (and flushed) before resolving. */
  readonly transaction = <T>(work: () => Query<T>): Promise<T> =>
    this.own(() => this.db.transaction(() => this.drive(work())).immediate());

  /**
   * Runs `work` (synchronous, or a promise) with better-sqlite3's errors as the domain's: a
   * closed handle, a lock held past busy_timeout, an I/O error or a full disk is
   * `storageUnavailable` (driver-errors.ts). Every SQLite port's work passes here.
   */
  readonly own = <T>(work: () => T | Promise<T>): Promise<T> => {
    try {
      const result = work();
      return result instanceof Promise
        ? result.catch((error: unknown) => {
            throw toDomainError(error);
          })
        : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(toDomainError(error));
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
