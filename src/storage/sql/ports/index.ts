/**
 * The store's ports, one a file beside this one, built the same way for both databases: each
 * method runs a shared query (queries/*.ts) on the adapter's runner. Only what is hot or truly
 * different is the adapter's own (OwnParts), passed in here.
 */

import type { EventStore } from '../../../domain/ports/event-store.ts';
import type { StatsStore } from '../../../domain/ports/stats-store.ts';
import type { StorePorts } from '../../../domain/ports/store.ts';
import type { Runner } from '../query.ts';
import { accountStore } from './accounts.ts';
import { destinationStore } from './destinations.ts';
import { eventFeed, type FeedBus } from './feed.ts';
import { type ForwardingQueue, forwardingStore } from './forwarding.ts';
import { keyStore } from './keys.ts';
import { type EventDeletes, lifecycleStore } from './lifecycle.ts';
import { matchKeyStore } from './match-keys.ts';
import { pixelStore } from './pixels.ts';
import { sessionStore } from './sessions.ts';
import { statsStore } from './stats.ts';
import { type DeliveryQueue, webhookStore } from './webhooks.ts';

/**
 * What each database writes its own way (the hot paths and what truly differs: the event insert,
 * the delivery claim, a hand retry, the forwarding claim and settlement, deletions and their
 * counts, the live tail's bus, the stats); every other part of every port is a shared query.
 */
export interface OwnParts {
  events: EventStore;
  stats: StatsStore;
  feed: FeedBus;
  deliveries: DeliveryQueue;
  deletes: EventDeletes;
  forwarding: ForwardingQueue;
}

/**
 * The store's ports, built the same way for both databases around their own parts: the one
 * place that lists them (the compiler holds it to StorePorts), so a new port is one line here.
 */
export function storePorts(runner: Runner, own: OwnParts): StorePorts {
  return {
    accounts: accountStore(runner),
    pixels: pixelStore(runner),
    events: own.events,
    webhooks: webhookStore(runner, own.deliveries),
    keys: keyStore(runner),
    stats: statsStore(runner, own.stats),
    feed: eventFeed(runner, own.feed),
    sessions: sessionStore(runner),
    lifecycle: lifecycleStore(runner, own.deletes),
    matchKeys: matchKeyStore(runner),
    destinations: destinationStore(runner),
    forwarding: forwardingStore(runner, own.forwarding),
  };
}
