import type { EventFeed } from '../../../domain/ports/event-feed.ts';
import * as events from '../../queries/events.ts';
import type { Runner } from '../query.ts';

/**
 * The live tail's bus is per database (in-process on SQLite, LISTEN/NOTIFY on PostgreSQL:
 * sqlite/feed.ts, postgres/feed.ts); its reads are shared.
 */
export type FeedBus = Pick<EventFeed, 'subscribe' | 'close'>;

export function eventFeed({ sql: db, read, own }: Runner, bus: FeedBus): EventFeed {
  return {
    subscribe: (pixelId, listener) => own(() => bus.subscribe(pixelId, listener)),
    eventsBySeq: (accountId, pixelId, seqs) =>
      read(() => events.eventsBySeq(db, accountId, pixelId, seqs)),
    eventsAfter: (accountId, pixelId, afterSeq, limit) =>
      read(() => events.eventsAfter(db, accountId, pixelId, afterSeq, limit)),
    close: () => bus.close(),
  };
}
