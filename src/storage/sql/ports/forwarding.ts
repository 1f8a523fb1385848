import { uuidv7 } from '../../../domain/ids.ts';
import type { ForwardingStore } from '../../../domain/ports/forwarding-store.ts';
import * as destinations from '../../queries/destinations.ts';
import * as forwarding from '../../queries/forwarding.ts';
import type { Runner } from '../query.ts';

/**
 * The forwarding queue's parts written per database (sqlite/forwarding.ts, postgres/forwarding.ts):
 * the worker's claims and settlements (hot paths: one set-based statement per batch on
 * PostgreSQL, prepared statements per job on SQLite).
 */
export type ForwardingQueue = Pick<ForwardingStore, 'claim' | 'settle'> &
  /** Its own earliest-due read, where the shared one does not fit the database (Citus). */
  Partial<Pick<ForwardingStore, 'nextDueAt'>>;

/** Forwarding jobs: the reads and the replay shared, the queue's hot paths per database. */
export function forwardingStore(
  { sql: db, read, transaction, own }: Runner,
  queue: ForwardingQueue,
): ForwardingStore {
  return {
    claim: (options) => own(() => queue.claim(options)),
    settle: (options) =>
      own(async (note) => {
        await queue.settle(options);
        // `event.forwarded` messages committed with the outcomes; retries due soon, or a
        // destination back to work.
        note({ outbox: options.emit.length > 0, forwarding: true });
      }),
    nextDueAt: queue.nextDueAt
      ? () => own(() => queue.nextDueAt!())
      : () => read(() => forwarding.nextDueAt(db)),
    eventForwarding: (accountId, pixelId, eventIds, withLog) =>
      read(() => forwarding.eventForwarding(db, accountId, pixelId, eventIds, withLog)),
    async replay(options) {
      const destination = await read(() =>
        destinations.getDestination(db, options.accountId, options.pixelId, options.destinationId),
      );
      if (!destination) return 0;
      const scope = { ...options, destination };
      // Counted page by page, each its own short read, letting the event loop run in between
      // (SQLite reads resolve synchronously): a replay of 500,000 events holds nothing long.
      let promised = 0;
      let cursor: forwarding.ReplayCursor | null = null;
      for (;;) {
        const at: forwarding.ReplayCursor | null = cursor;
        const page: forwarding.ReplayCount = await read(() =>
          forwarding.countReplayPage(db, scope, at, options.now),
        );
        promised += page.count;
        if (page.last || page.next === null) break;
        cursor = page.next;
        await yieldToLoop();
      }
      if (promised === 0) return 0;
      await transaction(() =>
        forwarding.recordReplay(db, { ...scope, id: uuidv7(), promised, now: options.now }),
      );
      return promised;
    },
    async claimReplay(options) {
      // A read first: the worker looks every second, and a write transaction each time would
      // cost SQLite's writer (and a flush) for nothing.
      const candidates = await read(() => forwarding.freeReplays(db, options.now));
      if (candidates.length === 0) return null;
      return transaction(() => forwarding.claimReplay(db, candidates, options));
    },
    advanceReplay: (options) => transaction(() => forwarding.advanceReplay(db, options)),
    backlog: () => read(() => forwarding.backlog(db)),
  };
}

/** Lets the event loop serve what is waiting (I/O included) before the next page. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
