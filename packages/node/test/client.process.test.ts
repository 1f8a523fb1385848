/**
 * @trackway/node against the real server: a `trackway serve` process on a SQLite file, real
 * HTTP, a real local webhook receiver. Nothing is mocked.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Receiver, startReceiver } from '../../../test/receiver.ts';
import {
  type TrackResult,
  Trackway,
  TrackwayApiError,
  verifyWebhook,
  WebhookVerificationError,
} from '../src/index.ts';
import { startTestServer, type TestServer } from './server.ts';

/** Polls `condition` (each try is a real request) until it holds; fails after 10 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A real HTTP hop in front of the server that forwards every request but, for the first
 * `drop` track batches, throws the answer away and cuts the connection: the server committed
 * the batch, the client never heard. (A kill can land there only by luck; this lands there.)
 */
async function lossyProxy(target: string, drop: number) {
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'content-encoding']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method!,
        headers,
        ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
      });
      const body = await answer.text();
      if (req.url === '/v1/track/batch' && drop > 0) {
        drop -= 1;
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () => {
      proxy.closeAllConnections();
      proxy.close();
    },
  };
}

describe('@trackway/node against a real server (SQLite)', () => {
  let t: TestServer;
  let client: Trackway;
  let receiver: Receiver;

  before(async () => {
    t = await startTestServer(undefined, {
      TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
      TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
    });
    receiver = await startReceiver();
    client = new Trackway({ apiKey: t.apiKey, baseUrl: t.server.url, retryBaseDelay: 50 });
  });
  after(async () => {
    await client.close();
    await receiver.close();
    await t.stop();
  });

  it('typed methods cover pixels, events and health', async () => {
    assert.deepEqual(await client.health(), { status: 'ok' });
    assert.deepEqual(await client.ready(), { status: 'ready' });
    const pixel = await client.pixels.create({ name: 'Shop', domain: 'shop.example.com' });
    assert.match(pixel.id, /^px_/);
    assert.equal((await client.pixels.get(pixel.id)).name, 'Shop');
    assert.equal((await client.pixels.update(pixel.id, { name: 'Shop 2' })).name, 'Shop 2');
    assert.ok((await client.pixels.list({ limit: 100 })).pixels.some((p) => p.id === pixel.id));

    const checked = await client.events.validate({
      pixel_id: pixel.id,
      event_name: 'Lead',
      user_data: { email: 'jane@example.com' },
    });
    assert.equal(checked.valid, true);
    assert.match(checked.event.user_data?.['email'] ?? '', /^[0-9a-f]{64}$/);
    assert.deepEqual(checked.destinations, []);
    // Validate stores nothing: the list below counts only the two events tracked.
    const one = await client.events.track({ pixel_id: pixel.id, event_name: 'Lead' });
    assert.equal(one.success, true);
    assert.match(one.event_id, /^evt_[0-9a-f-]{36}$/);
    const again = await client.events.track({
      pixel_id: pixel.id,
      event_name: 'Lead',
      event_id: one.event_id,
    });
    assert.equal(again.deduplicated, true);
    const batch = await client.events.trackBatch([
      { pixel_id: pixel.id, event_name: 'PageView' },
      { pixel_id: pixel.id, event_name: 'Purchase', currency: 'XXX1' },
    ]);
    assert.deepEqual([batch.accepted, batch.rejected], [1, 1]);
    const page = await client.events.list(pixel.id, { limit: 1 });
    assert.equal(page.total, 2);
    assert.equal(page.events.length, 1);
    await client.events.track({
      pixel_id: pixel.id,
      event_name: 'Lead',
      user_data: { email: 'jane@example.com' },
    });
    assert.deepEqual(
      await client.pixels.erase(pixel.id, { user_data: { email: 'jane@example.com' } }),
      {
        deleted: 1,
      },
    );

    await assert.rejects(client.pixels.get('px_doesnotexist00000'), (error: unknown) => {
      assert.ok(error instanceof TrackwayApiError);
      assert.equal(error.status, 404);
      assert.equal(error.error, 'Not found');
      return true;
    });
    await assert.rejects(
      client.pixels.create({ name: 'x', domain: 'not a host' }),
      (error: unknown) => error instanceof TrackwayApiError && error.field === 'domain',
    );
  });

  it('events.stream() follows a pixel: a tracked event arrives, and lastEventId resumes', async () => {
    const pixel = await client.pixels.create({ name: 'Live', domain: 'shop.example.com' });
    const controller = new AbortController();
    // Resolved once the server has subscribed: everything stored from now on is sent.
    const stream = await client.events.stream(pixel.id, { signal: controller.signal });
    const live = stream[Symbol.asyncIterator]();
    const tracked = await client.events.track({
      pixel_id: pixel.id,
      event_name: 'Purchase',
      value: 5,
      currency: 'USD',
    });
    const first = await live.next();
    assert.equal(first.done, false);
    assert.equal(first.value?.event_id, tracked.event_id);
    assert.equal(first.value?.event_name, 'Purchase');
    assert.equal(first.value?.value, 5);
    assert.match(stream.lastEventId ?? '', /^\d+$/);
    const seen = stream.lastEventId;

    // Stored while nobody listens, then caught up on from the last id seen.
    controller.abort();
    assert.equal((await live.next()).done, true, 'aborting ends the loop without throwing');
    const missed = await client.events.track({ pixel_id: pixel.id, event_name: 'Lead' });
    const resumed = await client.events.stream(pixel.id, { lastEventId: seen! });
    for await (const event of resumed) {
      assert.equal(event.event_id, missed.event_id);
      break;
    }
    assert.notEqual(resumed.lastEventId, seen);

    await assert.rejects(
      client.events.stream('px_doesnotexist00000'),
      (error: unknown) => error instanceof TrackwayApiError && error.status === 404,
    );
  });

  it('events.export() streams the events of a pixel oldest first, as ndjson or csv', async () => {
    const pixel = await client.pixels.create({ name: 'Export', domain: 'shop.example.com' });
    const sent = await client.events.trackBatch(
      ['a', 'b', 'c'].map((id, i) => ({
        pixel_id: pixel.id,
        event_name: 'Lead',
        event_id: `export-${id}`,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
      })),
    );
    assert.equal(sent.accepted, 3);
    const ndjson = await new Response(await client.events.export(pixel.id)).text();
    const lines = ndjson.trim().split('\n');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).event_id),
      ['export-a', 'export-b', 'export-c'],
    );
    const csv = await new Response(await client.events.export(pixel.id, { format: 'csv' })).text();
    assert.equal(csv.trim().split(/\r?\n/).length, 4, 'a header row and one row an event');
    await assert.rejects(
      client.events.export('px_doesnotexist00000'),
      (error: unknown) => error instanceof TrackwayApiError && error.status === 404,
    );
  });

  it('track() reports each event of a batch: refused ones with their error, not the others', async () => {
    const pixel = await client.pixels.create({ name: 'Mixed', domain: 'shop.example.com' });
    const seen: TrackResult[] = [];
    const mixed = new Trackway({
      apiKey: t.apiKey,
      baseUrl: t.server.url,
      onResult: (result) => seen.push(result),
    });
    const good = mixed.track({ pixel_id: pixel.id, event_name: 'Purchase', value: 1 });
    const bad = mixed.track({ pixel_id: pixel.id, event_name: 'Purchase', currency: 'nope' });
    const missing = mixed.track({ pixel_id: 'px_doesnotexist00000', event_name: 'Lead' });
    const results = await mixed.close();
    assert.equal(results.length, 3);
    assert.deepEqual(await Promise.all([good, bad, missing]), results);
    assert.equal(results[0]!.ok, true);
    assert.deepEqual(
      results.slice(1).map((r) => !r.ok && [r.status, r.error, r.field]),
      [
        [400, 'Invalid request', 'currency'],
        [404, 'Not found', undefined],
      ],
    );
    assert.equal(seen.length, 3);
    assert.throws(() => mixed.track({ pixel_id: pixel.id, event_name: 'Lead' }), /after close/);
  });

  it('track() resolves ok: true with warnings for a purchase whose phone could not be used', async () => {
    const pixel = await client.pixels.create({ name: 'Drops', domain: 'shop.example.com' });
    const pending = client.track({
      pixel_id: pixel.id,
      event_name: 'Purchase',
      event_id: 'order-phone-1',
      value: 49.99,
      currency: 'USD',
      user_data: { email: 'jane@example.com', phone: '650 555 0199' },
    });
    await client.flush();
    const result = await pending;
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.ok(result.ok);
    assert.deepEqual(result.warnings, ['user_data.phone dropped: must be in E.164 format']);
    const stored = await client.events.get(pixel.id, 'order-phone-1');
    assert.deepEqual(stored.dropped, ['user_data.phone']);
    assert.equal(stored.value, 49.99);
  });

  it('verifyWebhook accepts real deliveries before and after a rotation, refuses forgeries', async () => {
    const created = await client.webhooks.create({
      url: receiver.url,
      events: ['pixel.created', 'pixel.updated'],
      description: 'client test',
    });
    const first = created.secret;
    const pixel = await client.pixels.create({ name: 'Hooked', domain: 'shop.example.com' });
    await receiver.waitFor((r) => r.some((d) => d.json.event === 'pixel.created'));
    const createdDelivery = receiver.received.find((d) => d.json.event === 'pixel.created')!;
    const payload = await verifyWebhook(createdDelivery.body, createdDelivery.headers, [first]);
    assert.equal(payload.event, 'pixel.created');
    if (payload.event === 'pixel.created') assert.equal(payload.data.id, pixel.id);

    // Refusals, on the real delivery's bytes and headers.
    const refused = (code: string) => (error: unknown) =>
      error instanceof WebhookVerificationError && error.code === code;
    await assert.rejects(
      verifyWebhook(createdDelivery.body.replace('Hooked', 'Hacked'), createdDelivery.headers, [
        first,
      ]),
      refused('invalid_signature'),
    );
    const { secret: stranger } = await client.webhooks.create({
      url: receiver.url,
      events: ['subscription.updated'],
    });
    await assert.rejects(
      verifyWebhook(createdDelivery.body, createdDelivery.headers, [stranger]),
      refused('invalid_signature'),
    );
    const sentAt = Number(createdDelivery.headers['webhook-timestamp']);
    await assert.rejects(
      verifyWebhook(createdDelivery.body, createdDelivery.headers, [first], {
        now: new Date((sentAt + 301) * 1000),
      }),
      refused('timestamp_out_of_tolerance'),
    );

    // Rotation: during the overlap the delivery verifies against either secret.
    const rotated = await client.webhooks.rotateSecret(created.id);
    assert.notEqual(rotated.secret, first);
    await client.pixels.update(pixel.id, { status: 'paused' });
    await receiver.waitFor((r) => r.some((d) => d.json.event === 'pixel.updated'));
    const updated = receiver.received.find((d) => d.json.event === 'pixel.updated')!;
    assert.equal(String(updated.headers['webhook-signature']).split(' ').length, 2);
    const afterRotation = await verifyWebhook(updated.body, updated.headers, [rotated.secret]);
    assert.equal(afterRotation.event, 'pixel.updated');
    if (afterRotation.event === 'pixel.updated') {
      assert.deepEqual(afterRotation.data.previous_attributes, { status: 'active' });
    }
    await verifyWebhook(updated.body, updated.headers, [first]);
    // A receiver that reads only X-Service-Signature verifies with both secrets configured.
    const serviceOnly = { 'x-service-signature': updated.headers['x-service-signature'] };
    await verifyWebhook(updated.body, serviceOnly, [first, rotated.secret]);

    // Test sends and a manual retry are signed the same way.
    const test = await client.webhooks.sendTest(created.id, { event: 'subscription.updated' });
    await receiver.waitFor((r) => r.some((d) => d.json.id === test.message_id));
    const sample = receiver.received.find((d) => d.json.id === test.message_id)!;
    const typed = await verifyWebhook(sample.body, sample.headers, [rotated.secret]);
    assert.equal(typed.event, 'subscription.updated');
    // A retry while the attempt is still being recorded is a 409: wait for its outcome.
    await until(async () => {
      const { deliveries } = await client.webhooks.listDeliveries(created.id);
      return deliveries.some((d) => d.message_id === test.message_id && d.status === 'succeeded');
    });
    const retried = await client.webhooks.retryDelivery(created.id, test.message_id);
    assert.equal(retried.status, 'pending');
    await receiver.waitFor((r) => r.filter((d) => d.json.id === test.message_id).length === 2);
    const replayed = receiver.received.filter((d) => d.json.id === test.message_id)[1]!;
    assert.equal(replayed.body, sample.body, 'a retry sends the same bytes');
    await verifyWebhook(replayed.body, replayed.headers, [rotated.secret]);

    assert.equal((await client.webhooks.get(created.id)).description, 'client test');
    assert.equal((await client.webhooks.update(created.id, { enabled: false })).enabled, false);
    assert.ok((await client.webhooks.list()).webhooks.some((w) => w.id === created.id));
    assert.deepEqual(await client.webhooks.delete(created.id), { id: created.id, deleted: true });
  });

  it('a batch whose answer was lost is sent again and stored once (client-made event_id)', async () => {
    const pixel = await client.pixels.create({ name: 'Lossy', domain: 'shop.example.com' });
    const proxy = await lossyProxy(t.server.url, 2);
    const lossy = new Trackway({
      apiKey: t.apiKey,
      baseUrl: proxy.url,
      maxBatchSize: 50,
      retryBaseDelay: 10,
    });
    try {
      for (let i = 0; i < 50; i++) void lossy.track({ pixel_id: pixel.id, event_name: 'Lead' });
      const results = await lossy.close();
      assert.ok(results.every((r) => r.ok));
      // Stored by the first (unanswered) send; the answered resend reports duplicates.
      assert.equal(results.filter((r) => r.ok && r.deduplicated).length, 50);
      assert.equal((await client.events.list(pixel.id, { limit: 1 })).total, 50);
    } finally {
      proxy.close();
    }
  });

  it('a burst of 10,000 track() calls survives a server restart: each event stored once', async () => {
    const pixel = await client.pixels.create({ name: 'Burst', domain: 'shop.example.com' });
    let answered = 0;
    let reachedHalfway!: () => void;
    const halfway = new Promise<void>((resolve) => {
      reachedHalfway = resolve;
    });
    let refusedConnections = 0;
    const burst = new Trackway({
      apiKey: t.apiKey,
      baseUrl: t.server.url,
      maxBatchSize: 100,
      retryBaseDelay: 50,
      // Enough to outlast a restart on a busy machine (the default, 10, covers about 30 s).
      maxRetries: 40,
      // Counts requests that got no answer: proof the restart landed inside the burst.
      fetch: (input, init) =>
        fetch(input, init).catch((error: unknown) => {
          refusedConnections += 1;
          throw error;
        }),
      onResult: () => {
        answered += 1;
        if (answered === 3_000) reachedHalfway();
      },
    });
    const tracked = Array.from({ length: 10_000 }, (_, i) =>
      burst.track({ pixel_id: pixel.id, event_name: 'Purchase', value: i, currency: 'EUR' }),
    );
    // Killed (no drain) while batches are still queued and one is likely in flight.
    await halfway;
    await t.restart();
    const results = await Promise.all(tracked);
    await burst.close();

    assert.ok(refusedConnections > 0, 'the restart happened while batches were being sent');
    const deduplicated = results.filter((r) => r.ok && r.deduplicated).length;
    process.stderr.write(
      `restart: ${refusedConnections} requests unanswered, ${deduplicated} events answered as duplicates of a lost answer\n`,
    );
    const failed = results.filter((r) => !r.ok);
    assert.deepEqual(failed.slice(0, 3), []);
    const ids = new Set(results.map((r) => r.event_id));
    assert.equal(ids.size, 10_000);

    const stored = new Map<string, number>();
    for await (const event of client.events.iterate(pixel.id, { limit: 100 })) {
      stored.set(event.event_id, (stored.get(event.event_id) ?? 0) + 1);
    }
    assert.equal(stored.size, 10_000);
    assert.ok([...stored.values()].every((n) => n === 1));
    assert.ok([...ids].every((id) => stored.has(id)));
    assert.equal((await client.events.list(pixel.id, { limit: 1 })).total, 10_000);
  });
});
