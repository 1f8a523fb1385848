/**
 * Commits announce themselves: every port method that writes webhook messages (or puts a
 * delivery back in the queue) or stores events tells the notifier once it has committed. Done
 * here once, around any adapter, so neither a route nor an adapter can forget it. (Event
 * commits are the one case the adapter reports itself, through `onQueued`: only it knows
 * whether a commit wrote messages or forwarding jobs.)
 */
import type { Change, CommitNotifier, InsertOutcome, Store } from '../domain/ports.ts';

/** `change`, noting whether the version that committed emitted anything. */
function noting<T>(change: Change<T>): { change: Change<T>; emitted: () => boolean } {
  let emitted = false;
  return {
    change(current) {
      const result = change(current);
      // A transaction run again (a conflict) calls `change` again: the last call is the one
      // that committed.
      emitted = result !== null && result.emit.length > 0;
      return result;
    },
    emitted: () => emitted,
  };
}

export function announceCommits(store: Store, notifier: CommitNotifier): Store {
  const { accounts, pixels, events, webhooks } = store;
  const outboxIf = (wrote: boolean) => {
    if (wrote) notifier.outboxWritten();
  };
  // The event store says what each commit of events queued, so a worker is woken only when
  // that commit gave it work: a look costs a query or two, which on a busy ingest path with no
  // endpoint or destination would be all cost and no work.
  events.onQueued((queued) => {
    if (queued.webhookMessages) notifier.outboxWritten();
    if (queued.forwardingJobs) notifier.forwardingQueued();
  });
  const counted = (outcomes: InsertOutcome[]) => {
    let stored = 0;
    for (const outcome of outcomes) if (outcome !== 'duplicate') stored += 1;
    notifier.eventsStored({ stored, deduplicated: outcomes.length - stored });
  };
  return {
    accounts: {
      createAccount: (account, firstKey) => accounts.createAccount(account, firstKey),
      getAccount: (accountId) => accounts.getAccount(accountId),
      countAccounts: () => accounts.countAccounts(),
      listAccounts: () => accounts.listAccounts(),
      async updateAccount(accountId, change) {
        const noted = noting(change);
        const result = await accounts.updateAccount(accountId, noted.change);
        outboxIf(result !== null && noted.emitted());
        return result;
      },
      createApiKey: (key) => accounts.createApiKey(key),
      listApiKeys: (accountId) => accounts.listApiKeys(accountId),
      revokeApiKey: (keyId, at) => accounts.revokeApiKey(keyId, at),
      findByKeyHash: (hash) => accounts.findByKeyHash(hash),
    },
    pixels: {
      async createPixel(pixel, quota, emit) {
        const outcome = await pixels.createPixel(pixel, quota, emit);
        outboxIf(outcome === 'created' && emit.length > 0);
        return outcome;
      },
      getPixel: (accountId, pixelId) => pixels.getPixel(accountId, pixelId),
      listPixels: (accountId, page) => pixels.listPixels(accountId, page),
      async updatePixel(accountId, pixelId, change) {
        const noted = noting(change);
        const result = await pixels.updatePixel(accountId, pixelId, noted.change);
        outboxIf(result !== null && noted.emitted());
        return result;
      },
      findByPublishableKey: (key, now) => pixels.findByPublishableKey(key, now),
      isPixelSite: (hostname) => pixels.isPixelSite(hostname),
    },
    events: {
      async insertEvent(event, emit) {
        const outcome = await events.insertEvent(event, emit);
        counted([outcome]);
        return outcome;
      },
      async insertEvents(list) {
        const results = await events.insertEvents(list);
        counted(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
        return results;
      },
      // Already listened to above; another listener (none today) would be told the same.
      onQueued: (listener) => events.onQueued(listener),
      listEvents: (query) => events.listEvents(query),
      getEvent: (accountId, pixelId, eventId) => events.getEvent(accountId, pixelId, eventId),
    },
    webhooks: {
      createEndpoint: (endpoint, limit) => webhooks.createEndpoint(endpoint, limit),
      listEndpoints: (accountId) => webhooks.listEndpoints(accountId),
      getEndpoint: (accountId, endpointId) => webhooks.getEndpoint(accountId, endpointId),
      async updateEndpoint(accountId, endpointId, change) {
        const noted = noting(change);
        const result = await webhooks.updateEndpoint(accountId, endpointId, noted.change);
        // Switched back on: what it had pending is claimable again.
        const resumed = result !== null && !result.before.enabled && result.after.enabled;
        outboxIf(result !== null && (noted.emitted() || resumed));
        return result;
      },
      deleteEndpoint: (accountId, endpointId, at) =>
        webhooks.deleteEndpoint(accountId, endpointId, at),
      listAttempts: (accountId, endpointId, page) =>
        webhooks.listAttempts(accountId, endpointId, page),
      async retryDelivery(accountId, endpointId, messageId, at) {
        const outcome = await webhooks.retryDelivery(accountId, endpointId, messageId, at);
        outboxIf(outcome === 'queued');
        return outcome;
      },
      async enqueueFor(endpointId, event) {
        const id = await webhooks.enqueueFor(endpointId, event);
        notifier.outboxWritten();
        return id;
      },
      claimDue: (options) => webhooks.claimDue(options),
      recordAttempt: (delivery, owner, result, at) =>
        webhooks.recordAttempt(delivery, owner, result, at),
      nextDueAt: () => webhooks.nextDueAt(),
      backlog: () => webhooks.backlog(),
    },
    destinations: {
      createDestination: (d, limit) => store.destinations.createDestination(d, limit),
      listDestinations: (a, p) => store.destinations.listDestinations(a, p),
      getDestination: (a, p, id) => store.destinations.getDestination(a, p, id),
      async updateDestination(accountId, pixelId, id, change) {
        const result = await store.destinations.updateDestination(accountId, pixelId, id, change);
        // Resumed (switched on, or out of suspension): what it has waiting is claimable again.
        if (
          result !== null &&
          ((!result.before.enabled && result.after.enabled) ||
            (result.before.state === 'suspended' && result.after.state !== 'suspended'))
        ) {
          notifier.forwardingQueued();
        }
        return result;
      },
      deleteDestination: (a, p, id) => store.destinations.deleteDestination(a, p, id),
    },
    forwarding: {
      claim: (options) => store.forwarding.claim(options),
      async settle(options) {
        await store.forwarding.settle(options);
        // `event.forwarded` messages committed with the outcomes.
        if (options.emit.length > 0) notifier.outboxWritten();
        // Retries due soon, or a destination back to work.
        notifier.forwardingQueued();
      },
      nextDueAt: () => store.forwarding.nextDueAt(),
      eventForwarding: (a, p, ids, withLog) => store.forwarding.eventForwarding(a, p, ids, withLog),
      async replay(options) {
        const n = await store.forwarding.replay(options);
        if (n > 0) notifier.replayAccepted();
        return n;
      },
      claimReplay: (options) => store.forwarding.claimReplay(options),
      async advanceReplay(options) {
        const result = await store.forwarding.advanceReplay(options);
        if (result !== null && result.queued > 0) notifier.forwardingQueued();
        return result;
      },
      backlog: () => store.forwarding.backlog(),
    },
    // Keys, stats, the live-tail feed and sessions write no webhook messages and store no events.
    keys: store.keys,
    stats: store.stats,
    feed: store.feed,
    sessions: store.sessions,
    // Deletes and exports write no webhook messages and store no events.
    lifecycle: store.lifecycle,
    // Raw match keys are written by the event insert (announced there) and only deleted here.
    matchKeys: store.matchKeys,
    migrate: () => store.migrate(),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
