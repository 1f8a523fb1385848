import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  accountRecord,
  bareEvent,
  destinationRecord,
  pixelRecord,
  storedPixel,
  testStores,
  webhookEndpoint,
} from '../../test/harness.ts';
import { CommitSignal } from '../domain/commits.ts';
import { newId } from '../domain/ids.ts';
import type { WebhookEvent } from '../domain/model.ts';
import type { StoredCounts } from '../domain/ports/commit-notifier.ts';
import type { Store } from '../domain/ports/store.ts';

const T0 = new Date('2026-03-01T12:00:00Z');

for (const kind of await testStores()) {
  describe(`commits announce themselves [${kind.name}]`, () => {
    let store: Store;
    let wakes = 0;
    let forwarderWakes = 0;
    const stored: StoredCounts[] = [];
    before(async () => {
      const commits = new CommitSignal();
      commits.onOutboxWritten(() => {
        wakes += 1;
      });
      commits.onEventsStored((counts) => stored.push(counts));
      commits.onForwardingQueued(() => {
        forwarderWakes += 1;
      });
      store = await kind.open(commits);
    });
    after(() => store.close());

    const woke = async (work: () => Promise<unknown>) => {
      const before = wakes;
      await work();
      return wakes - before;
    };
    /** [webhook worker wake-ups, forwarding worker wake-ups] during `work`. */
    const wokeBoth = async (work: () => Promise<unknown>) => {
      const before = [wakes, forwarderWakes];
      await work();
      return [wakes - before[0]!, forwarderWakes - before[1]!];
    };

    it('wakes a worker only when the commit of events queued work for it', async () => {
      // Straight to the unwrapped store: creating the fixture wakes nobody in this test.
      const { accountId, id: pixelId } = await storedPixel(store, T0);
      const tracked = (eventId: string): WebhookEvent => ({
        accountId,
        type: 'event.tracked',
        occurredAt: T0,
        data: { event_id: eventId },
      });
      const track = (eventId: string, eventName = 'Purchase') =>
        store.events.insertEvent(bareEvent({ accountId, pixelId, eventId, eventName }), [
          tracked(eventId),
        ]);
      // No endpoint, no destination: the event.tracked message has nobody to go to.
      assert.deepEqual(await wokeBoth(() => track('q-1')), [0, 0]);

      // A destination for Purchase only: its events queue a job, others nothing.
      await store.destinations.createDestination(
        destinationRecord({ accountId, id: pixelId }, T0, { events: ['Purchase'] }),
        10,
      );
      assert.deepEqual(await wokeBoth(() => track('q-2')), [0, 1]);
      assert.deepEqual(await wokeBoth(() => track('q-3', 'PageView')), [0, 0]);
      assert.deepEqual(await wokeBoth(() => track('q-2')), [0, 0], 'duplicate: nothing queued');

      // An endpoint for event.tracked: now the message is written too.
      await store.webhooks.createEndpoint(
        webhookEndpoint(accountId, T0, { events: ['event.tracked'] }),
        null,
      );
      assert.deepEqual(await wokeBoth(() => track('q-4')), [1, 1]);
      assert.deepEqual(await wokeBoth(() => track('q-5', 'PageView')), [1, 0]);
      // A batch is one commit: one wake-up each, however many events queued work.
      assert.deepEqual(
        await wokeBoth(() =>
          store.events.insertEvents(
            ['q-6', 'q-7', 'q-8'].map((eventId) => ({
              event: bareEvent({ accountId, pixelId, eventId, eventName: 'Purchase' }),
              emit: [tracked(eventId)],
            })),
          ),
        ),
        [1, 1],
      );
    });

    it('announces webhook messages and events after their commit, batches included', async () => {
      const accountId = newId('acct');
      await store.accounts.createAccount(accountRecord(T0, { id: accountId, name: 'A' }), null);
      const pixel = pixelRecord(accountId, T0);
      const message: WebhookEvent = {
        accountId,
        type: 'pixel.created',
        occurredAt: T0,
        data: {},
      };
      assert.equal(await woke(() => store.pixels.createPixel(pixel, null, [message])), 1);
      const endpoint = webhookEndpoint(accountId, T0, {
        events: ['event.tracked'],
        enabled: false,
      });
      assert.equal(await woke(() => store.webhooks.createEndpoint(endpoint, null)), 0);
      // Switched back on: its pending deliveries are due again.
      const enable = (enabled: boolean) =>
        store.webhooks.updateEndpoint(accountId, endpoint.id, (current) => ({
          next: { ...current, enabled },
          emit: [],
        }));
      assert.equal(await woke(() => enable(true)), 1);
      assert.equal(await woke(() => enable(true)), 0, 'already on: nothing new is due');

      const e1 = bareEvent({ accountId, pixelId: pixel.id, eventId: 'a-1' });
      const tracked = { ...message, type: 'event.tracked' as const };
      stored.length = 0;
      assert.equal(await woke(() => store.events.insertEvent(e1, [tracked])), 1);
      assert.equal(await woke(() => store.events.insertEvent(e1, [tracked])), 0, 'duplicate');
      const e2 = bareEvent({ accountId, pixelId: pixel.id, eventId: 'a-2' });
      assert.equal(
        await woke(() =>
          store.events.insertEvents([
            { event: e1, emit: [tracked] },
            { event: e2, emit: [tracked] },
          ]),
        ),
        1,
      );
      assert.deepEqual(stored, [
        { stored: 1, deduplicated: 0 },
        { stored: 0, deduplicated: 1 },
        { stored: 1, deduplicated: 1 },
      ]);

      assert.equal(
        await woke(() => store.webhooks.enqueueFor(endpoint.id, { ...tracked, data: {} })),
        1,
      );
      assert.equal(
        await woke(() => store.webhooks.retryDelivery(accountId, endpoint.id, 'msg_none', T0)),
        0,
        'nothing queued',
      );
    });
  });
}
