/**
 * The PostgreSQL side of the runner's error translation (runner.ts): the pool every query of
 * the store goes through, so a driver's outage or conflict is the domain's error wherever a
 * query is sent from. Apart from runner.ts, so that database.ts (which creates the pool) and
 * runner.ts (which uses database.ts's transactions) do not import each other.
 */
import pg from 'pg';
import { toDomainError } from '../driver-errors.ts';

/** Rejects with the domain's error for a driver's (driver-errors.ts), any other as is. */
export function translated<T>(promise: Promise<T>): Promise<T> {
  return promise.catch((error: unknown) => {
    throw toDomainError(error);
  });
}

/**
 * The pool every PostgreSQL query of the store goes through, shared queries and hand-written
 * ones alike: it answers a driver's outage or conflict as the domain's `storageUnavailable`
 * (a 503), so no port or route can answer a raw driver error (a 500). Transactions translate
 * what their client threw once they give up (database.ts inTransaction, oneStatement), after
 * their own retries, which need the driver's codes.
 */
export class PostgresPool extends pg.Pool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads (text, config, callback) pass through as they are
  override query(...args: any[]): any {
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const result = (super.query as (...a: any[]) => unknown)(...args);
    return result instanceof Promise ? translated(result) : result;
  }

  // biome-ignore lint/suspicious/noExplicitAny: the callback form stays pg's own
  override connect(...args: any[]): any {
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const result = (super.connect as (...a: any[]) => unknown)(...args);
    return result instanceof Promise ? translated(result) : result;
  }
}
