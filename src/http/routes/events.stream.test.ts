import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type Harness,
  postgresUrl,
  startHarness,
  type TestAccount,
  testStores,
} from '../../../test/harness.ts';
import { testLogger } from '../../../test/log-capture.ts';
import { PostgresStore } from '../../storage/postgres/store.ts';
import { buildApp } from '../app.ts';

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Reads a text/event-stream body message by message (comments included, as `comment`). */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next(): Promise<SseMessage> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) message.comment = line.slice(1).trim();
            const m = /^(id|event|data): ?(.*)$/.exec(line);
            if (m) message[m[1] as 'id' | 'event' | 'data'] = m[2]!;
          }
          return message;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += value;
      }
    },
    /** The next `event` message, skipping comments. */
    async nextEvent(): Promise<SseMessage> {
      for (;;) {
        const message = await this.next();
        if (message.event) return message;
      }
    },
    cancel: () => reader.cancel(),
  };
}

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`GET /v1/pixels/:pixel_id/events/stream [${kind.name}]`, () => {
    let h: Harness;
    let base: string;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;

    before(async () => {
      h = await startHarness(kind, { liveTailHeartbeatMs: 50 });
      base = await h.app.listen({ port: 0, host: '127.0.0.1' });
      acme = await h.account('pro');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
    });
    after(() => h.close());

    const open = (owner: TestAccount, headers: Record<string, string> = {}, id = pixelId) =>
      fetch(`${base}/v1/pixels/${id}/events/stream`, {
        headers: { ...owner.headers, ...headers },
      });

    it('sends each newly stored event as an `event` message, with heartbeats, and resumes after Last-Event-ID', async () => {
      const res = await open(acme);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.ok(res.headers.get('x-ratelimit-remaining'), 'rate limited like every route');
      const stream = sseReader(res.body!);
      assert.equal((await stream.next()).comment, 'connected');
      const heartbeat = await stream.next();
      assert.equal(heartbeat.comment, 'heartbeat');

      await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'a',
        value: 5,
        currency: 'usd',
        action_source: 'app',
        user_data: { email: 'a@example.com', client_ip_address: '203.0.113.5' },
      });
      const first = await stream.nextEvent();
      assert.equal(first.event, 'event');
      const record = JSON.parse(first.data!);
      assert.equal(record.event_id, 'a');
      assert.equal(record.currency, 'USD');
      assert.equal(record.pixel_id, pixelId);
      // The same record as the list (contract §11, §12): hashes only, with its estimate.
      assert.equal(record.action_source, 'app');
      assert.deepEqual(record.match_quality.keys, ['email', 'client_ip_address']);
      assert.equal(record.match_quality.score, 3.3);
      assert.ok(!first.data!.includes('203.0.113.5'));
      assert.match(first.id!, /^\d+$/);
      // A duplicate is not a new event.
      await h.track(acme, { pixel_id: pixelId, event_name: 'Purchase', event_id: 'a' });
      await h.track(acme, { pixel_id: pixelId, event_name: 'Lead', event_id: 'b' });
      assert.equal(JSON.parse((await stream.nextEvent()).data!).event_id, 'b');
      await stream.cancel();

      // Missed while disconnected: sent first on reconnection, then live events.
      await h.track(acme, { pixel_id: pixelId, event_name: 'Lead', event_id: 'c' });
      await h.track(acme, { pixel_id: pixelId, event_name: 'Lead', event_id: 'd' });
      const resumed = sseReader((await open(acme, { 'last-event-id': first.id! })).body!);
      const replay = [
        await resumed.nextEvent(),
        await resumed.nextEvent(),
        await resumed.nextEvent(),
      ];
      assert.deepEqual(
        replay.map((m) => JSON.parse(m.data!).event_id),
        ['b', 'c', 'd'],
      );
      await h.track(acme, { pixel_id: pixelId, event_name: 'Lead', event_id: 'e' });
      assert.equal(JSON.parse((await resumed.nextEvent()).data!).event_id, 'e');
      await resumed.cancel();
    });

    it("is 404 for another account's pixel, 401 without a key, 400 for a bad Last-Event-ID", async () => {
      const foreign = await open(other);
      assert.equal(foreign.status, 404);
      assert.deepEqual(await foreign.json(), {
        error: 'Not found',
        message: `Pixel not found: ${pixelId}`,
      });
      const anonymous = await fetch(`${base}/v1/pixels/${pixelId}/events/stream`);
      assert.equal(anonymous.status, 401);
      const bad = await open(acme, { 'last-event-id': 'abc' });
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { field: string }).field, 'Last-Event-ID');
    });

    it('ends open streams when the server closes', async () => {
      const local = await startHarness(kind);
      const url = await local.app.listen({ port: 0, host: '127.0.0.1' });
      const owner = await local.account('pro');
      const id = await local.pixel(owner);
      const res = await fetch(`${url}/v1/pixels/${id}/events/stream`, { headers: owner.headers });
      const stream = sseReader(res.body!);
      await stream.next();
      await local.close();
      await assert.rejects(stream.next(), /stream ended|terminated/);
    });

    if (kind.name.startsWith('postgres')) {
      it('hears events stored by another instance (LISTEN/NOTIFY)', async () => {
        const { schema, events } = h.adapter as PostgresStore;
        // The other instance stores on the same ingest path (each sends its own notices).
        const store2 = await PostgresStore.open({
          url: postgresUrl(schema!),
          poolSize: 2,
          ingest: events.ingest,
        });
        const app2 = await buildApp({
          store: store2,
          clock: h.clock,
          config: { trustProxy: false, webhookAllowPrivate: true, webhookAllowHttp: true },
          logger: testLogger(),
          rateLimiter: null,
        });
        try {
          const res = await open(acme);
          const stream = sseReader(res.body!);
          await stream.next();
          const tracked = await app2.inject({
            method: 'POST',
            url: '/v1/track',
            headers: acme.headers,
            payload: { pixel_id: pixelId, event_name: 'Purchase', event_id: 'from-instance-2' },
          });
          assert.equal(tracked.statusCode, 200);
          assert.equal(JSON.parse((await stream.nextEvent()).data!).event_id, 'from-instance-2');
          await stream.cancel();
        } finally {
          await app2.close();
          await store2.close();
        }
      });
    }
  });
}
