/**
 * What the drivers' errors mean, known only here: SQLSTATE codes, pg's messages, socket codes,
 * SQLite's busy code. Every store port is wrapped so that the domain and the HTTP layer see
 * domain errors (`storageUnavailable`), never a driver's.
 */
import { storageUnavailable, TrackwayError } from '../domain/errors.ts';
import type { Store } from '../domain/ports.ts';

/** Errors that mean "the database cannot be reached right now", from either store's driver. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // PostgreSQL: admin/crash shutdown, cannot connect now, too many connections.
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // SQLite: still locked by another writer after busy_timeout.
  'SQLITE_BUSY',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Connection is closed|connection error/i;

/**
 * True for a storage outage (as opposed to a bug): the request is answered 503 at once, and
 * the same request can simply be sent again later.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  return UNAVAILABLE_MESSAGES.test(error.message);
}

/**
 * PostgreSQL aborted a transaction to resolve a conflict with another one, not because of
 * anything in it: a serialization failure or a deadlock. Nothing was written, and running it
 * again normally succeeds.
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** A driver's error as the domain's, when it is an outage or a conflict; anything else as is. */
export function toDomainError(error: unknown): unknown {
  if (error instanceof TrackwayError) return error;
  if (isStorageUnavailable(error)) return storageUnavailable('unreachable', error);
  // Still conflicting after the store's own retries (postgres/database.ts): nothing was
  // stored, and the client's retry is the right answer, not a 500.
  if (isTransactionConflict(error)) return storageUnavailable('conflict', error);
  return error;
}

const PORTS = new Set<PropertyKey>([
  'accounts',
  'pixels',
  'events',
  'webhooks',
  'lifecycle',
  'matchKeys',
  'destinations',
  'forwarding',
]);

/** Every method of `port` with its rejections passed through toDomainError. */
function translating<T extends object>(port: T): T {
  return new Proxy(port, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(target, args);
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw toDomainError(error);
              })
            : result;
        } catch (error) {
          throw toDomainError(error);
        }
      };
    },
  });
}

/**
 * The store with its four ports translating driver errors. A Proxy, so the adapter's own type
 * (`instanceof`, `close()`) is unchanged.
 */
export function translateDriverErrors<S extends Store>(store: S): S {
  const ports = new Map<PropertyKey, object>();
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (!PORTS.has(key) || typeof value !== 'object' || value === null) return value;
      let wrapped = ports.get(key);
      if (!wrapped) {
        wrapped = translating(value);
        ports.set(key, wrapped);
      }
      return wrapped;
    },
  });
}
