import type { Statement } from 'better-sqlite3';
import type { WebhookEvent } from '../../domain/model.ts';
import type { CommitNotifier } from '../../domain/ports/commit-notifier.ts';
import { toDomainError } from '../driver-errors.ts';
import { Committed, type Note } from '../sql/committed.ts';
import { type Query, type Runner, type Sql, type Step, sqliteSql } from '../sql/query.ts';
import type { SqliteDatabase } from './database.ts';

/**
 * Drives shared queries (sql/query.ts) on better-sqlite3: synchronously, so a transaction is
 * one `db.transaction` call that nothing else on the event loop can interleave with.
 */
export class SqliteRunner implements Runner {
  readonly sql: Sql = sqliteSql;
  private readonly statements = new Map<string, Statement>();
  /** What the work running now has done (committed.ts): SQLite's work runs one at a time. */
  private current: Committed | null = null;

  /**
   * `outbox` writes what a query `emit`s, inside its transaction (outbox.ts outboxWriter);
   * `notifier` is told what each piece of work committed, once it has.
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: (events: WebhookEvent[]) => void = noOutbox,
    private readonly notifier?: CommitNotifier,
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
  readonly own = <T>(work: (note: (fact: Note) => void) => T | Promise<T>): Promise<T> => {
    const committed = new Committed();
    const outer = this.current;
    this.current = committed;
    try {
      const result = work(committed.note);
      if (!(result instanceof Promise)) {
        committed.announce(this.notifier);
        return Promise.resolve(result);
      }
      return result.then(
        (value) => {
          committed.announce(this.notifier);
          return value;
        },
        (error: unknown) => {
          throw toDomainError(error);
        },
      );
    } catch (error) {
      return Promise.reject(toDomainError(error));
    } finally {
      this.current = outer;
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
    if (step.kind === 'note') return this.current?.note(step.note);
    if (step.kind === 'emit') {
      this.current?.note({ outbox: step.events.length > 0 });
      return this.outbox(step.events);
    }
    const statement = this.prepare(step.query.sql);
    const params = step.query.parameters.map(bindable);
    if (step.kind === 'run') return statement.run(...params).changes;
    if (step.kind === 'first') return statement.get(...params);
    return statement.all(...params);
  }

  /**
   * The statement for `sql`, prepared once on this handle, on first use: the shared queries and
   * the ports' hand-written SQL (the workers run these many times a second) share the cache.
   */
  prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
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
