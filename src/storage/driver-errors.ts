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
  // SQLite: still locked by another writer after busy_timeout; the disk full.
  'SQLITE_BUSY',
  'SQLITE_FULL',
]);
/**
 * SQLite's primary codes whose extended forms (`SQLITE_IOERR_WRITE`, `SQLITE_READONLY_DBMOVED`
 * …) all mean the file cannot be used right now: an I/O error, a file made read-only or moved,
 * a file that cannot be opened. None is a bug in the request.
 */
const UNAVAILABLE_CODE_FAMILIES = /^SQLITE_(IOERR|READONLY|CANTOPEN|BUSY)(_|$)/;
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Connection is closed|connection error|database connection is not open/i;

/**
 * True for a storage outage (as opposed to a bug): the request is answered 503 at once, and
 * the same request can simply be sent again later.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || UNAVAILABLE_CODE_FAMILIES.test(code))
  ) {
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

/** The Store's ports: every member that is not a method (migrate, ping, close). */
type PortName = {
  [K in keyof Store]: Store[K] extends (...args: never[]) => unknown ? never : K;
}[keyof Store];

/**
 * Every port, as a record the compiler checks against the Store type: a port added to Store
 * and left out here fails `npm run typecheck`, so none answers a raw driver error (a 500) in
 * an outage (issue 30: keys, stats, feed and sessions had been left out of a hand-kept list).
 */
const PORT_NAMES: Record<PortName, true> = {
  accounts: true,
  pixels: true,
  events: true,
  webhooks: true,
  keys: true,
  stats: true,
  feed: true,
  sessions: true,
  lifecycle: true,
  matchKeys: true,
  destinations: true,
  forwarding: true,
};
const PORTS = new Set<PropertyKey>(Object.keys(PORT_NAMES));

/**
 * A port that answers one outcome per item (`insertEvents`: PromiseSettledResult[]) carries
 * its failures inside a fulfilled promise: each of those is translated too.
 */
function translateSettled(value: unknown): unknown {
  if (!Array.isArray(value) || !value.some(isRejectedResult)) return value;
  return value.map((item) =>
    isRejectedResult(item) ? { status: 'rejected', reason: toDomainError(item.reason) } : item,
  );
}

function isRejectedResult(item: unknown): item is PromiseRejectedResult {
  return (
    typeof item === 'object' &&
    item !== null &&
    (item as { status?: unknown }).status === 'rejected' &&
    'reason' in item
  );
}

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
            ? result.then(translateSettled, (error: unknown) => {
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
 * The store with every port translating driver errors. A Proxy, so the adapter's own type
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
