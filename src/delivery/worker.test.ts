import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  dropSchema,
  freshSchemaName,
  type Harness,
  postgresAvailable,
  postgresUrl,
  startHarness,
  type TestAccount,
  TestClock,
  tempDir,
  testStores,
} from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import { type Receiver, startReceiver } from '../../test/receiver.ts';
import { setPlan } from '../domain/accounts/accounts.ts';
import type { AttemptResult, ClaimedDelivery } from '../domain/model.ts';
import { systemClock } from '../domain/ports/clock.ts';
import type { Store } from '../domain/ports/store.ts';
import {
  signPayload,
  standardWebhookSignature,
  verifyPayloadSignature,
} from '../domain/webhooks/signing.ts';
import { PostgresStore } from '../storage/postgres/store.ts';
import { SqliteStore } from '../storage/sqlite/store.ts';
import { createSender } from './sender.ts';
import { DeliveryWorker, PER_ENDPOINT_IN_FLIGHT } from './worker.ts';

const local = { allowPrivate: true, allowHttp: true };
const logger = testLogger();

for (const kind of await testStores()) {
  describe(`webhook delivery to a real receiver [${kind.name}]`, () => {
    let h: Harness;
    let worker: DeliveryWorker;
    let receiver: Receiver;
    let acme: TestAccount;
    // Long enough that no request a test leaves hanging times out during the suite (a timeout
    // frees a slot and brings a retry, which the per-endpoint cap test would count).
    const sender = createSender(local, { connectMs: 1_000, totalMs: 60_000 });

    /** Told of each attempt once its record has committed (an event to wait on, not a sleep). */
    const recorded = new Set<(endpointId: string) => void>();
    const attemptRecorded = (endpointId: string) =>
      new Promise<void>((resolve) => {
        const listener = (id: string) => {
          if (id !== endpointId) return;
          recorded.delete(listener);
          resolve();
        };
        recorded.add(listener);
      });

    before(async () => {
      h = await startHarness(kind, { onOutboxWrite: () => worker.wake() });
      const webhooks = Object.create(h.store.webhooks) as Store['webhooks'];
      webhooks.recordAttempt = async (delivery, by, result, at) => {
        await h.store.webhooks.recordAttempt(delivery, by, result, at);
        for (const listener of [...recorded]) listener(delivery.endpoint.id);
      };
      // A compressed schedule: the real one is minutes to hours apart.
      worker = new DeliveryWorker({
        store: webhooks,
        clock: systemClock,
        sender,
        logger,
        schedule: [0, 0, 0],
        pollMs: 50,
      });
      worker.start();
      receiver = await startReceiver();
      acme = await h.account('enterprise');
    });
    afterEach(() => {
      receiver.respond = () => ({ status: 200, body: 'ok' });
    });
    after(async () => {
      // The receiver first: it ends the requests left hanging, which the worker waits for.
      await receiver.close();
      await worker.stop();
      await sender.close();
      await h.close();
    });

    const register = async (owner: TestAccount, payload: Record<string, unknown> = {}) => {
      const res = await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: receiver.url, ...payload },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; secret: string };
    };
    /** The attempt log once no attempt is in flight any more (the receiver answers first). */
    const deliveries = async (owner: TestAccount, id: string) => {
      for (;;) {
        const log = (
          await h.request(owner, { method: 'GET', url: `/v1/webhooks/${id}/deliveries` })
        ).json().deliveries as Array<Record<string, unknown>>;
        if (log.every((d) => d['status'] !== 'pending')) return log;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };

    it('delivers event.tracked, signed, with exactly the five data fields, once per event', async () => {
      const owner = await h.account('pro');
      const webhook = await register(owner, { events: ['event.tracked'] });
      const pixelId = await h.pixel(owner);
      await h.track(owner, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'o-1',
        value: 12.5,
        currency: 'EUR',
        user_data: { email: 'a@b.co' },
      });
      const dup = await h.track(owner, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'o-1',
        value: 99,
      });
      assert.equal(dup.json().deduplicated, true);
      await receiver.waitFor((r) => r.some((x) => x.json.webhook_id === webhook.id));
      const got = receiver.received.find((x) => x.json.webhook_id === webhook.id)!;
      assert.equal(got.json.event, 'event.tracked');
      assert.deepEqual(Object.keys(got.json).sort(), [
        'data',
        'event',
        'id',
        'timestamp',
        'webhook_id',
      ]);
      assert.deepEqual(got.json.data, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'o-1',
        value: 12.5,
        timestamp: (got.json.data as { timestamp: string }).timestamp,
      });
      assert.match(got.json.id, /^msg_/);
      assert.equal(got.headers['x-service-signature'], signPayload(webhook.secret, got.body));
      assert.ok(
        verifyPayloadSignature(
          webhook.secret,
          got.body,
          got.headers['x-service-signature'] as string,
        ),
      );
      assert.equal(got.headers['webhook-id'], got.json.id);
      assert.equal(
        got.headers['webhook-signature'],
        standardWebhookSignature(
          webhook.secret,
          got.json.id,
          Number(got.headers['webhook-timestamp']),
          got.body,
        ),
      );
      // Give a duplicate webhook every chance to show up before counting.
      await h.track(owner, { pixel_id: pixelId, event_name: 'Lead', event_id: 'o-2' });
      await receiver.waitFor((r) =>
        r.some(
          (x) =>
            x.json.webhook_id === webhook.id &&
            (x.json.data as { event_id: string }).event_id === 'o-2',
        ),
      );
      assert.equal(
        receiver.received.filter(
          (x) =>
            x.json.webhook_id === webhook.id &&
            (x.json.data as { event_id: string }).event_id === 'o-1',
        ).length,
        1,
      );
      const log = await deliveries(owner, webhook.id);
      assert.equal(log.length, 2);
      // Random attempt ids: a counter shared by all accounts would leak their traffic.
      for (const d of log) assert.match(d['id'] as string, /^att_[0-9A-Za-z]{16}$/);
      assert.notEqual(log[0]!['id'], log[1]!['id']);
      assert.ok(
        log.every(
          (d) =>
            d['status'] === 'succeeded' &&
            d['response_status_code'] === 200 &&
            d['response_body'] === 'ok',
        ),
      );
    });

    it('emits pixel.created, pixel.updated with previous_attributes, and subscription.updated', async () => {
      const owner = await h.account('enterprise');
      const webhook = await register(owner, {
        events: ['pixel.created', 'pixel.updated', 'subscription.updated'],
      });
      const pixelId = await h.pixel(owner, { name: 'Before', domain: 'before.example.com' });
      await h.request(owner, {
        method: 'PATCH',
        url: `/v1/pixels/${pixelId}`,
        payload: { name: 'After', domain: 'before.example.com' },
      });
      await setPlan({ store: h.store, clock: systemClock }, owner.account.id, {
        requestsPerMinute: 9_000,
      });
      // No wake-up by hand: the store announces the committed message itself.
      const mine = () => receiver.received.filter((x) => x.json.webhook_id === webhook.id);
      await receiver.waitFor(() => mine().length === 3);
      const byKind = Object.fromEntries(mine().map((x) => [x.json.event, x.json.data]));
      assert.equal((byKind['pixel.created'] as { name: string }).name, 'Before');
      assert.deepEqual(
        (byKind['pixel.updated'] as { previous_attributes: unknown }).previous_attributes,
        { name: 'Before' },
      );
      assert.equal((byKind['pixel.updated'] as { name: string }).name, 'After');
      assert.deepEqual(byKind['subscription.updated'], {
        account_id: owner.account.id,
        plan: 'enterprise',
        status: 'active',
        previous_plan: 'enterprise',
        limits: { requests_per_minute: 9_000, daily_limit: 7_200_000, pixels: null },
      });
    });

    it('retries a receiver that fails twice, sending the same bytes each time', async () => {
      const webhook = await register(acme, { events: ['pixel.created'] });
      let calls = 0;
      receiver.respond = (r) =>
        r.json.webhook_id === webhook.id && ++calls <= 2
          ? { status: 500, body: 'boom' }
          : { status: 200 };
      await h.pixel(acme, { name: 'Retry', domain: 'retry.example.com' });
      const mine = () => receiver.received.filter((x) => x.json.webhook_id === webhook.id);
      await receiver.waitFor(() => mine().length === 3);
      const bodies = new Set(mine().map((x) => x.body));
      assert.equal(bodies.size, 1, 'every retry sends the same body');
      const log = await deliveries(acme, webhook.id);
      assert.deepEqual(
        log.map((d) => [d['attempt'], d['status'], d['error']]),
        [
          [3, 'succeeded', null],
          [2, 'failed', 'HTTP 500'],
          [1, 'failed', 'HTTP 500'],
        ],
      );
      assert.equal(log[1]!['response_body'], 'boom');
    });

    it('keeps an exhausted message visible and delivers it on a manual retry', async () => {
      const webhook = await register(acme, { events: ['pixel.created'] });
      let failing = true;
      receiver.respond = (r) =>
        r.json.webhook_id === webhook.id && failing ? { status: 503 } : { status: 200 };
      await h.pixel(acme, { name: 'Exhaust', domain: 'exhaust.example.com' });
      const mine = () => receiver.received.filter((x) => x.json.webhook_id === webhook.id);
      await receiver.waitFor(() => mine().length === 4); // first attempt + 3 retries
      const exhausted = await deliveries(acme, webhook.id);
      assert.deepEqual(
        exhausted.map((d) => d['status']),
        ['failed', 'failed', 'failed', 'failed'],
      );
      const messageId = mine()[0]!.json.id;
      failing = false;
      const retry = await h.request(acme, {
        method: 'POST',
        url: `/v1/webhooks/${webhook.id}/deliveries/${messageId}/retry`,
      });
      assert.equal(retry.statusCode, 202);
      await receiver.waitFor(() => mine().length === 5);
      const log = await deliveries(acme, webhook.id);
      assert.equal(log[0]!['status'], 'succeeded');
      assert.equal(log[0]!['attempt'], 5);
    });

    it('disables an endpoint that answers 410 Gone', async () => {
      const webhook = await register(acme, { events: ['pixel.created'] });
      receiver.respond = (r) =>
        r.json.webhook_id === webhook.id ? { status: 410 } : { status: 200 };
      const recordedOnce = attemptRecorded(webhook.id);
      await h.pixel(acme, { name: 'Gone', domain: 'gone.example.com' });
      // The attempt's record disables the endpoint in its own transaction.
      await recordedOnce;
      const state = (
        await h.request(acme, { method: 'GET', url: `/v1/webhooks/${webhook.id}` })
      ).json();
      assert.equal(state.enabled, false);
    });

    it('does not let a hanging endpoint delay another one', async () => {
      const slow = await register(acme, { events: ['pixel.created'] });
      const fast = await register(acme, { events: ['pixel.created'] });
      receiver.respond = (r) => (r.json.webhook_id === slow.id ? 'hang' : { status: 200 });
      const started = Date.now();
      for (let i = 0; i < 12; i++)
        await h.pixel(acme, { name: `H${i}`, domain: `h${i}.example.com` });
      await receiver.waitFor(
        (r) => r.filter((x) => x.json.webhook_id === fast.id).length === 12,
        1_500,
      );
      assert.ok(Date.now() - started < 1_900, 'fast endpoint served before the slow one timed out');
      await h.request(acme, {
        method: 'PATCH',
        url: `/v1/webhooks/${slow.id}`,
        payload: { enabled: false },
      });
    });

    it('passes the 24 h rotation overlap: both secrets sign, X-Service-Signature stays old', async () => {
      const webhook = await register(acme, { events: ['pixel.created'] });
      const rotated = (
        await h.request(acme, { method: 'POST', url: `/v1/webhooks/${webhook.id}/rotate-secret` })
      ).json();
      assert.equal(
        rotated.previous_secret_expires_at,
        new Date(h.clock.now().getTime() + 24 * 3600_000).toISOString(),
      );
      const shown = await h.request(acme, { method: 'GET', url: `/v1/webhooks/${webhook.id}` });
      assert.equal(shown.json().previous_secret_expires_at, rotated.previous_secret_expires_at);
      await h.pixel(acme, { name: 'Rotated', domain: 'rotated.example.com' });
      await receiver.waitFor((r) => r.some((x) => x.json.webhook_id === webhook.id));
      const got = receiver.received.find((x) => x.json.webhook_id === webhook.id)!;
      const ts = Number(got.headers['webhook-timestamp']);
      assert.equal(
        got.headers['webhook-signature'],
        [
          standardWebhookSignature(rotated.secret, got.json.id, ts, got.body),
          standardWebhookSignature(webhook.secret, got.json.id, ts, got.body),
        ].join(' '),
      );
      // A receiver that has not deployed the new secret yet keeps verifying.
      assert.equal(got.headers['x-service-signature'], signPayload(webhook.secret, got.body));
    });

    it('signs with the new secret alone once the overlap has ended', async () => {
      const webhook = await register(acme, { events: ['pixel.created'] });
      // Rotated 25 h ago (by the API's clock): the overlap ended an hour ago.
      h.clock.set(new Date(Date.now() - 25 * 3600_000));
      const rotated = (
        await h.request(acme, { method: 'POST', url: `/v1/webhooks/${webhook.id}/rotate-secret` })
      ).json();
      h.clock.set(new Date());
      const shown = await h.request(acme, { method: 'GET', url: `/v1/webhooks/${webhook.id}` });
      assert.equal(shown.json().previous_secret_expires_at, null);
      await h.pixel(acme, { name: 'Rotated later', domain: 'rotated-later.example.com' });
      await receiver.waitFor((r) => r.some((x) => x.json.webhook_id === webhook.id));
      const got = receiver.received.find((x) => x.json.webhook_id === webhook.id)!;
      const ts = Number(got.headers['webhook-timestamp']);
      assert.equal(
        got.headers['webhook-signature'],
        standardWebhookSignature(rotated.secret, got.json.id, ts, got.body),
      );
      assert.equal(got.headers['x-service-signature'], signPayload(rotated.secret, got.body));
    });
  });
}

for (const kind of await testStores()) {
  describe(`a receiver's answer the store cannot keep as it is [${kind.name}]`, () => {
    let h: Harness;
    let receiver: Receiver;
    let owner: TestAccount;
    /** Set by a test to make the store refuse a record (a fault a driver could raise). */
    let refuse: ((result: AttemptResult) => boolean) | undefined;
    const sender = createSender(local, { connectMs: 1_000, totalMs: 2_000 });
    let worker: DeliveryWorker;

    before(async () => {
      h = await startHarness(kind, { onOutboxWrite: () => worker.wake() });
      const webhooks = Object.create(h.store.webhooks) as Store['webhooks'];
      webhooks.recordAttempt = (delivery, by, result, at) =>
        refuse?.(result)
          ? Promise.reject(new Error('refused by the test'))
          : h.store.webhooks.recordAttempt(delivery, by, result, at);
      // A short lease: a record that failed would bring the message back within the test.
      worker = new DeliveryWorker({
        store: webhooks,
        clock: systemClock,
        sender,
        logger,
        schedule: [0],
        pollMs: 20,
        leaseMs: 200,
      });
      worker.start();
      receiver = await startReceiver();
      owner = await h.account('enterprise');
    });
    after(async () => {
      await worker.stop();
      await sender.close();
      await receiver.close();
      await h.close();
    });

    /** The attempt log once nothing is in flight (bounded, so a redelivery loop fails the test). */
    const settled = async (id: string) => {
      for (let tries = 0; tries < 2_000; tries++) {
        const log = (
          await h.request(owner, { method: 'GET', url: `/v1/webhooks/${id}/deliveries` })
        ).json().deliveries as Array<Record<string, unknown>>;
        if (log.length > 0 && log.every((d) => d['status'] !== 'pending')) return log;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.fail('the delivery never settled');
    };

    it('records a 200 answered with a NUL byte and invalid UTF-8 once, as a success (issue 15)', async () => {
      receiver.respond = () => ({
        status: 200,
        body: Buffer.concat([Buffer.from('ok\u0000'), Buffer.from([0xff, 0xfe])]),
      });
      const hook = (
        await h.request(owner, {
          method: 'POST',
          url: '/v1/webhooks',
          payload: { url: receiver.url, events: ['pixel.created'] },
        })
      ).json();
      await h.pixel(owner, { name: 'Nul', domain: 'nul.example.com' });
      await receiver.waitFor((r) => r.some((x) => x.json.webhook_id === hook.id));
      const log = await settled(hook.id);
      assert.deepEqual(
        log.map((d) => [d['attempt'], d['status'], d['response_body']]),
        [[1, 'succeeded', 'ok\uFFFD\uFFFD\uFFFD']],
      );
      assert.equal(receiver.received.filter((x) => x.json.webhook_id === hook.id).length, 1);
    });

    it('records the outcome without the response when the record itself is refused', async () => {
      receiver.respond = () => ({ status: 200, body: 'fine' });
      refuse = (result) => result.responseBody !== null;
      try {
        const hook = (
          await h.request(owner, {
            method: 'POST',
            url: '/v1/webhooks',
            payload: { url: receiver.url, events: ['pixel.created'] },
          })
        ).json();
        await h.pixel(owner, { name: 'Refused', domain: 'refused.example.com' });
        await receiver.waitFor((r) => r.some((x) => x.json.webhook_id === hook.id));
        const log = await settled(hook.id);
        assert.deepEqual(
          log.map((d) => [
            d['attempt'],
            d['status'],
            d['response_status_code'],
            d['response_body'],
          ]),
          [[1, 'succeeded', 200, null]],
        );
        assert.equal(receiver.received.filter((x) => x.json.webhook_id === hook.id).length, 1);
      } finally {
        refuse = undefined;
      }
    });
  });
}

/**
 * Two ways to open several stores on one database: a shared SQLite file, and one PostgreSQL
 * schema (when PostgreSQL answers). Each store has its own connection(s), as separate
 * processes would.
 */
const sharedDatabases: Array<{
  name: string;
  open(): Promise<{ connect(): Promise<Store>; remove(): Promise<void> }>;
}> = [
  {
    name: 'sqlite file',
    async open() {
      const dir = tempDir();
      const file = join(dir.path, 'two-workers.db');
      return {
        connect: async () => SqliteStore.open(file),
        remove: async () => dir.remove(),
      };
    },
  },
  ...((await postgresAvailable())
    ? [
        {
          name: 'postgres schema',
          async open() {
            const schema = freshSchemaName();
            return {
              async connect() {
                const store = await PostgresStore.open({ url: postgresUrl(schema) });
                await store.migrate();
                return store;
              },
              remove: () => dropSchema(schema),
            };
          },
        },
      ]
    : []),
];

for (const shared of sharedDatabases) {
  describe(`two workers on one database [${shared.name}]`, () => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
    });

    it('never deliver one attempt twice', async () => {
      const database = await shared.open();
      const writer = await database.connect();
      const h = await startHarness({ name: 'shared', open: async () => writer });
      const owner = await h.account('enterprise');
      await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: receiver.url, events: ['event.tracked'] },
      });
      const pixelId = await h.pixel(owner);
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          h.track(owner, { pixel_id: pixelId, event_name: 'Lead', event_id: `w-${i}` }),
        ),
      );
      const stores = [await database.connect(), await database.connect()];
      const senders = stores.map(() => createSender(local));
      const workers = stores.map(
        (store, i) =>
          new DeliveryWorker({
            store: store.webhooks,
            clock: systemClock,
            sender: senders[i]!,
            logger,
            schedule: [1],
            pollMs: 20,
            concurrency: 16,
          }),
      );
      for (const w of workers) w.start();
      await receiver.waitFor((r) => new Set(r.map((x) => x.json.id)).size === 200, 30_000);
      for (const w of workers) await w.stop();
      const ids = receiver.received.map((x) => x.json.id);
      assert.equal(ids.length, 200, 'each message arrived exactly once');
      assert.equal(new Set(ids).size, 200);
      for (const s of senders) await s.close();
      for (const s of stores) await s.close();
      await h.close();
      await database.remove();
    });
  });
}

for (const kind of await testStores()) {
  describe(`the per-endpoint cap, polled on a test clock [${kind.name}]`, () => {
    it('never keeps more than the per-endpoint cap of requests open at one receiver', async () => {
      const pollMs = 50;
      let worker: DeliveryWorker | undefined;
      const h = await startHarness(kind, { onOutboxWrite: () => worker?.wake() });
      // Each claim the worker makes, once answered: a poll is over when its claim is.
      const claims: ClaimedDelivery[][] = [];
      let claimed: (() => void) | undefined;
      const webhooks = Object.create(h.store.webhooks) as Store['webhooks'];
      webhooks.claimDue = async (options) => {
        const batch = await h.store.webhooks.claimDue(options);
        claims.push(batch);
        claimed?.();
        return batch;
      };
      const nextClaim = () => new Promise<void>((resolve) => (claimed = resolve));
      const sender = createSender(local, { connectMs: 1_000, totalMs: 60_000 });
      // The API's own clock: polls fire only when the test moves it.
      worker = new DeliveryWorker({
        store: webhooks,
        clock: h.clock,
        sender,
        logger,
        schedule: [0],
        pollMs,
      });
      const own = await startReceiver();
      try {
        worker.start();
        own.respond = () => 'hang';
        const owner = await h.account('enterprise');
        const capped = await h.request(owner, {
          method: 'POST',
          url: '/v1/webhooks',
          payload: { url: own.url, events: ['pixel.created'] },
        });
        assert.equal(capped.statusCode, 201, capped.body);
        for (let i = 0; i < PER_ENDPOINT_IN_FLIGHT + 6; i++)
          await h.pixel(owner, { name: `C${i}`, domain: `c${i}.example.com` });
        await own.waitFor((r) => r.length >= PER_ENDPOINT_IN_FLIGHT, 1_500);
        // Every request so far hangs, so a slot can only free up if the cap is broken: let the
        // worker poll five times, each with deliveries due, and see it claims nothing more.
        for (let poll = 0; poll < 5; poll++) {
          // The tick before has set its poll timer once its claim has answered.
          await new Promise((resolve) => setImmediate(resolve));
          const next = nextClaim();
          h.clock.advance(pollMs);
          await next;
          assert.deepEqual(claims.at(-1), [], `poll ${poll + 1} claimed nothing`);
        }
        assert.equal(own.received.length, PER_ENDPOINT_IN_FLIGHT);
        await h.request(owner, {
          method: 'PATCH',
          url: `/v1/webhooks/${capped.json().id}`,
          payload: { enabled: false },
        });
      } finally {
        // The receiver first: it ends the requests left hanging, which the worker waits for.
        await own.close();
        await worker.stop();
        await sender.close();
        await h.close();
      }
    });
  });
}

describe('waking the delivery worker', () => {
  /** A worker on a SQLite store whose every look for work (nextDueAt) is counted. */
  const counted = async (pollMs: number) => {
    const dir = tempDir();
    const store = SqliteStore.open(join(dir.path, 'wake.db'));
    const clock = new TestClock();
    let looks = 0;
    let waiting: { n: number; resolve: () => void } | undefined;
    const webhooks = Object.create(store.webhooks) as Store['webhooks'];
    webhooks.nextDueAt = () => {
      looks += 1;
      if (waiting && looks >= waiting.n) waiting.resolve();
      return store.webhooks.nextDueAt();
    };
    const sender = createSender(local);
    const worker = new DeliveryWorker({
      store: webhooks,
      clock,
      sender,
      logger,
      schedule: [0],
      pollMs,
    });
    return {
      worker,
      clock,
      looks: () => looks,
      /** Resolves once the worker has looked `n` times in all (an event, not a sleep). */
      looked: (n: number) =>
        looks >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { n, resolve })),
      async close() {
        await worker.stop();
        await sender.close();
        await store.close();
        dir.remove();
      },
    };
  };

  it('runs one look for work for a burst of wake-ups, and wakes again after a restart', async () => {
    // The clock never moves here, so every look below comes from a wake-up, not a poll.
    const w = await counted(1_000);
    try {
      w.worker.start();
      await w.looked(1);
      // What one group commit of 100 tracked events does: 100 wake-ups in one turn.
      for (let i = 0; i < 100; i++) w.worker.wake();
      await w.looked(2);
      // Stopped with a wake-up still queued: starting again must still look.
      w.worker.wake();
      await w.worker.stop();
      w.worker.start();
      await w.looked(3);
      // Every wake-up has been served: nothing else is queued.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(w.looks(), 3, 'a burst of wake-ups is one look');
    } finally {
      await w.close();
    }
  });

  it('polls when its clock passes the poll interval, and not before', async () => {
    const w = await counted(1_000);
    try {
      w.worker.start();
      await w.looked(1);
      // The look is over once nextDueAt has answered and the next poll is set on the clock.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      w.clock.advance(999);
      assert.equal(w.looks(), 1);
      w.clock.advance(1);
      assert.equal(w.looks(), 2, 'the poll fires as the clock reaches it');
    } finally {
      await w.close();
    }
  });
});
