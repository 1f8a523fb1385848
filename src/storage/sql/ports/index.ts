/**
 * The store ports, or the parts of them, that are the same on both databases: each method runs
 * a shared query (queries/*.ts) on the adapter's runner. Only what is hot or truly different
 * (the event insert, the delivery claim, a hand retry, the forwarding claim and settlement,
 * deletions and their counts, the live tail's bus, the stats) is the adapter's own, passed in
 * here.
 */

import { uuidv7 } from '../../../domain/ids.ts';
import type { AccountStore } from '../../../domain/ports/account-store.ts';
import type { DestinationStore } from '../../../domain/ports/destination-store.ts';
import type { EventFeed } from '../../../domain/ports/event-feed.ts';
import type { EventStore } from '../../../domain/ports/event-store.ts';
import type { ForwardingStore } from '../../../domain/ports/forwarding-store.ts';
import type { KeyStore } from '../../../domain/ports/key-store.ts';
import type { LifecycleStore } from '../../../domain/ports/lifecycle-store.ts';
import type { MatchKeyStore } from '../../../domain/ports/match-key-store.ts';
import type { PixelStore } from '../../../domain/ports/pixel-store.ts';
import type { SessionStore } from '../../../domain/ports/session-store.ts';
import type { StatsStore } from '../../../domain/ports/stats-store.ts';
import type { StorePorts } from '../../../domain/ports/store.ts';
import type { WebhookStore } from '../../../domain/ports/webhook-store.ts';
import * as retention from '../../queries/account-retention.ts';
import * as accounts from '../../queries/accounts.ts';
import * as keys from '../../queries/api-keys.ts';
import * as sessions from '../../queries/dashboard-sessions.ts';
import * as destinations from '../../queries/destinations.ts';
import * as events from '../../queries/events.ts';
import * as forwardable from '../../queries/forwardable.ts';
import * as forwarding from '../../queries/forwarding.ts';
import * as pixels from '../../queries/pixels.ts';
import * as visitors from '../../queries/visitors.ts';
import * as attempts from '../../queries/webhook-attempts.ts';
import * as deliveries from '../../queries/webhook-deliveries.ts';
import * as endpoints from '../../queries/webhook-endpoints.ts';
import type { Runner } from '../query.ts';

function accountStore({ sql: db, read, transaction }: Runner): AccountStore {
  return {
    createAccount: (a, firstKey) => transaction(() => accounts.createAccount(db, a, firstKey)),
    getAccount: (id) => read(() => accounts.getAccount(db, id)),
    countAccounts: () => read(() => accounts.countAccounts(db)),
    listAccounts: () => read(() => accounts.listAccounts(db)),
    updateAccount: (id, change) => transaction(() => accounts.updateAccount(db, id, change)),
    createApiKey: (key) => read(() => keys.insertKey(db, key)),
    listApiKeys: (accountId) => read(() => keys.listApiKeys(db, accountId)),
    revokeApiKey: (keyId, at) => transaction(() => keys.revokeApiKey(db, keyId, at)),
    findByKeyHash: (hash) => read(() => accounts.findByKeyHash(db, hash)),
  };
}

function pixelStore({ sql: db, read, transaction }: Runner): PixelStore {
  return {
    createPixel: (pixel, quota, emit) =>
      transaction(() => pixels.createPixel(db, pixel, quota, emit)),
    getPixel: (accountId, id) => read(() => pixels.getPixel(db, accountId, id)),
    listPixels: (accountId, page) => read(() => pixels.listPixels(db, accountId, page)),
    updatePixel: (accountId, id, change) =>
      transaction(() => pixels.updatePixel(db, accountId, id, change)),
    findByPublishableKey: (key, now) => read(() => pixels.findByPublishableKey(db, key, now)),
    isPixelSite: (hostname) => read(() => pixels.isPixelSite(db, hostname)),
  };
}

function keyStore({ sql: db, read, transaction }: Runner): KeyStore {
  return {
    createKey: (key) => read(() => keys.createKey(db, key)),
    listKeys: (accountId) => read(() => keys.listKeys(db, accountId)),
    pageKeys: (accountId, page) => read(() => keys.pageKeys(db, accountId, page)),
    revokeKey: (accountId, id, at) => transaction(() => keys.revokeKey(db, accountId, id, at)),
    touchKey: (id, at) => read(() => keys.touchKey(db, id, at)),
  };
}

function sessionStore({ sql: db, read, transaction }: Runner): SessionStore {
  return {
    createSession: (session) => transaction(() => sessions.createSession(db, session)),
    findSession: (tokenHash, now) => read(() => sessions.findSession(db, tokenHash, now)),
    deleteSession: (tokenHash) => read(() => sessions.deleteSession(db, tokenHash)),
  };
}

/** The dashboard's stats are read per database (sqlite/stats.ts, postgres/stats.ts), through the runner. */
function statsStore({ own }: Runner, stats: StatsStore): StatsStore {
  return {
    eventStats: (query) => own(() => stats.eventStats(query)),
    eventStatsJson: (query) => own(() => stats.eventStatsJson(query)),
    topEventStats: (query, top) => own(() => stats.topEventStats(query, top)),
    diagnostics: (query) => own(() => stats.diagnostics(query)),
    exampleLacking: (...args) => own(() => stats.exampleLacking(...args)),
    revenue: (query, names) => own(() => stats.revenue(query, names)),
    explore: (query) => own(() => stats.explore(query)),
  };
}

/** The delivery queue's parts written per database. */
export type DeliveryQueue = Pick<
  WebhookStore,
  'retryDelivery' | 'enqueueFor' | 'claimDue' | 'recordAttempt'
>;

function webhookStore(
  { sql: db, read, transaction, own }: Runner,
  queue: DeliveryQueue,
): WebhookStore {
  return {
    createEndpoint: (endpoint, limit) =>
      transaction(() => endpoints.createEndpoint(db, endpoint, limit)),
    listEndpoints: (accountId) => read(() => endpoints.listEndpoints(db, accountId)),
    getEndpoint: (accountId, id) => read(() => endpoints.getEndpoint(db, accountId, id)),
    updateEndpoint: (accountId, id, change) =>
      transaction(() => endpoints.updateEndpoint(db, accountId, id, change)),
    deleteEndpoint: (accountId, id, at) =>
      transaction(() => endpoints.deleteEndpoint(db, accountId, id, at)),
    listAttempts: (accountId, id, page) =>
      read(() => attempts.listAttempts(db, accountId, id, page)),
    retryDelivery: (accountId, id, messageId, at) =>
      own(async (note) => {
        const outcome = await queue.retryDelivery(accountId, id, messageId, at);
        note({ outbox: outcome === 'queued' });
        return outcome;
      }),
    enqueueFor: (endpointId, event) =>
      own(async (note) => {
        const id = await queue.enqueueFor(endpointId, event);
        note({ outbox: true });
        return id;
      }),
    claimDue: (options) => own(() => queue.claimDue(options)),
    recordAttempt: (delivery, owner, result, at) =>
      own(() => queue.recordAttempt(delivery, owner, result, at)),
    nextDueAt: () => read(() => deliveries.nextDueAt(db)),
    backlog: () => read(() => deliveries.backlog(db)),
  };
}

/** Deleting events takes them off the counts: written per database. */
export type EventDeletes = Pick<LifecycleStore, 'erasePerson' | 'purgeBatch'>;

function lifecycleStore({ sql: db, read, own }: Runner, deletes: EventDeletes): LifecycleStore {
  return {
    lastSeq: (accountId) => read(() => events.lastSeq(db, accountId)),
    erasePerson: (options) => own(() => deletes.erasePerson(options)),
    exportPage: (query) => read(() => events.exportPage(db, query)),
    purgeBatch: (accountId, pixelId, before, limit) =>
      own(() => deletes.purgeBatch(accountId, pixelId, before, limit)),
    retentionDays: (accountId) => read(() => retention.retentionDays(db, accountId)),
    setRetentionDays: (accountId, days) =>
      read(() => retention.setRetentionDays(db, accountId, days)),
  };
}

/** The live tail's bus is per database (in-process, LISTEN/NOTIFY); its reads are shared. */
export type FeedBus = Pick<EventFeed, 'subscribe' | 'close'>;

function eventFeed({ sql: db, read, own }: Runner, bus: FeedBus): EventFeed {
  return {
    subscribe: (pixelId, listener) => own(() => bus.subscribe(pixelId, listener)),
    eventsBySeq: (accountId, pixelId, seqs) =>
      read(() => events.eventsBySeq(db, accountId, pixelId, seqs)),
    eventsAfter: (accountId, pixelId, afterSeq, limit) =>
      read(() => events.eventsAfter(db, accountId, pixelId, afterSeq, limit)),
    close: () => bus.close(),
  };
}

/** Raw match keys and match quality reads (contract §11). */
function matchKeyStore({ sql: db, read, transaction }: Runner): MatchKeyStore {
  return {
    forwardable: (accountId, pixelId, eventIds, platform) =>
      read(() => forwardable.forwardable(db, accountId, pixelId, eventIds, platform)),
    eraseExpired: (now, limit) =>
      transaction(function* () {
        const keys = yield* forwardable.eraseExpired(db, now, limit);
        return keys + (yield* visitors.eraseExpiredVisitors(db, now, limit - keys));
      }),
    visitorKeys: (accountId, pixelId, anonymousId, now) =>
      read(() => visitors.visitorKeys(db, accountId, pixelId, anonymousId, now)),
    lastBrowserHit: (accountId, pixelId) =>
      read(() => visitors.lastBrowserHit(db, accountId, pixelId)),
    averageMatchQuality: (accountId, pixelId, fromHour) =>
      read(() => forwardable.averageMatchQuality(db, accountId, pixelId, fromHour)),
  };
}

/** A pixel's forwarding destinations (contract §12). */
function destinationStore({ sql: db, read, transaction }: Runner): DestinationStore {
  return {
    createDestination: (d, limit) =>
      transaction(() => destinations.createDestination(db, d, limit)),
    listDestinations: (accountId, pixelId) =>
      read(() => destinations.listDestinations(db, accountId, pixelId)),
    getDestination: (accountId, pixelId, id) =>
      read(() => destinations.getDestination(db, accountId, pixelId, id)),
    updateDestination: (accountId, pixelId, id, change) =>
      transaction(() => destinations.updateDestination(db, accountId, pixelId, id, change)),
    deleteDestination: (accountId, pixelId, id) =>
      transaction(() => destinations.deleteDestination(db, accountId, pixelId, id)),
  };
}

/**
 * The forwarding queue's parts written per database: the worker's claims and settlements (hot
 * paths: one set-based statement per batch on PostgreSQL, prepared statements per job on SQLite).
 */
export type ForwardingQueue = Pick<ForwardingStore, 'claim' | 'settle'>;

/** Forwarding jobs: the reads and the replay shared, the queue's hot paths per database. */
function forwardingStore(
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
    nextDueAt: () => read(() => forwarding.nextDueAt(db)),
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

/**
 * What each database writes its own way (the hot paths and what truly differs); every other
 * part of every port is a shared query.
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

/** Lets the event loop serve what is waiting (I/O included) before the next page. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
