import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`POST /v1/track/batch [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;
    let pausedPixel: string;
    let otherPixel: string;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
      pausedPixel = await h.pixel(acme);
      otherPixel = await h.pixel(other);
      const paused = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pausedPixel}`,
        payload: { status: 'paused' },
      });
      assert.equal(paused.statusCode, 200);
    });
    after(() => h.close());

    /** Always serialised, so a string or array body is sent as JSON too. */
    const post = (owner: TestAccount, url: string, payload: unknown) =>
      h.request(owner, {
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    const batch = (owner: TestAccount, payload: unknown) => post(owner, '/v1/track/batch', payload);
    const listIds = async (px: string) => {
      const res = await h.request(acme, { method: 'GET', url: `/v1/pixels/${px}/events` });
      return (res.json().events as Array<{ event_id: string; value: number | null }>).map((e) => [
        e.event_id,
        e.value,
      ]);
    };

    it('answers each event in its slot exactly as POST /v1/track would answer it alone', async () => {
      assert.equal(
        (await h.track(acme, { pixel_id: pixelId, event_name: 'Lead', event_id: 'known' }))
          .statusCode,
        200,
      );
      const rejected = [
        { event_name: 'Lead' },
        { pixel_id: pixelId, event_name: 'Lead', value: 'ten' },
        { pixel_id: pixelId, event_name: 'Lead', colour: 'red' },
        // A value dropped as unusable (§19) does not excuse an unknown field, as alone.
        { pixel_id: pixelId, event_name: 'Lead', colour: 'red', user_data: { phone: '(650)5' } },
        { pixel_id: pixelId, event_name: 'Lead', timestamp: '2999-01-01T00:00:00Z' },
        { pixel_id: otherPixel, event_name: 'Lead' },
        { pixel_id: pausedPixel, event_name: 'Lead' },
        // NUL is refused per event too, in its slot, not for the whole batch.
        { pixel_id: pixelId, event_name: 'Lead', title: 'a\u0000b' },
        { pixel_id: pixelId, event_name: 'Lead', custom_data: { k: ['x\u0000'] } },
        'not an object',
      ];
      const events = [
        { pixel_id: pixelId, event_name: 'Purchase', event_id: 'b-1', value: 1 },
        ...rejected,
        { pixel_id: pixelId, event_name: 'Purchase', event_id: 'b-1', value: 2 },
        { pixel_id: pixelId, event_name: 'Lead', event_id: 'known' },
        { pixel_id: pixelId, event_name: 'purchase', event_id: 'b-2' },
      ];
      const res = await batch(acme, { events });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.results.length, events.length);
      assert.deepEqual(
        body.results.map((r: { index: number }) => r.index),
        events.map((_, i) => i),
      );
      assert.deepEqual(body.results[0], {
        index: 0,
        status: 200,
        success: true,
        event_id: 'b-1',
        message: 'Event tracked',
      });
      // Every rejected event carries the very status and body it gets when sent alone.
      for (const [k, event] of rejected.entries()) {
        const alone = await post(acme, '/v1/track', event);
        const { index, status, ...slot } = body.results[k + 1];
        assert.equal(index, k + 1);
        assert.equal(status, alone.statusCode, JSON.stringify(event));
        assert.deepEqual(slot, alone.json(), JSON.stringify(event));
      }
      const tail = body.results.slice(rejected.length + 1);
      assert.deepEqual(tail[0], {
        index: rejected.length + 1,
        status: 200,
        success: true,
        event_id: 'b-1',
        message: 'Duplicate event_id; the first event was kept',
        deduplicated: true,
      });
      assert.equal(tail[1].deduplicated, true);
      assert.deepEqual(tail[2].warnings, [
        'event_name "purchase" is not a standard event; did you mean "Purchase"?',
      ]);
      assert.deepEqual(
        { accepted: body.accepted, deduplicated: body.deduplicated, rejected: body.rejected },
        { accepted: 2, deduplicated: 2, rejected: rejected.length },
      );
      const stored = await listIds(pixelId);
      assert.deepEqual(
        stored.filter(([id]) => id === 'b-1'),
        [['b-1', 1]],
        'first one wins',
      );
      assert.ok(stored.some(([id]) => id === 'b-2'));
    });

    it('stores an event without the user_data it cannot use and warns in its slot (§19)', async () => {
      const res = await batch(acme, {
        events: [
          {
            pixel_id: pixelId,
            event_name: 'Purchase',
            event_id: 'bd-1',
            value: 80,
            user_data: { phone: '650 555 0199', email: 'jane@example.com' },
          },
          { pixel_id: pixelId, event_name: 'Lead', event_id: 'bd-2', user_data: { email: 'nope' } },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(
        { accepted: body.accepted, rejected: body.rejected },
        { accepted: 2, rejected: 0 },
      );
      assert.deepEqual(body.results[0].warnings, [
        'user_data.phone dropped: must be in E.164 format',
      ]);
      assert.deepEqual(body.results[1].warnings, [
        'user_data.email dropped: must be an email address',
      ]);
      const record = (
        await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}/events/bd-1` })
      ).json();
      assert.deepEqual(record.dropped, ['user_data.phone']);
      assert.deepEqual(Object.keys(record.user_data), ['email']);
    });

    it('writes one event.tracked message per accepted event, none for the others', async () => {
      const owner = await h.account('pro');
      const px = await h.pixel(owner);
      const hook = await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'http://127.0.0.1:9/hook', events: ['event.tracked'] },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      const events = [
        { pixel_id: px, event_name: 'Lead', event_id: 'w-1' },
        { pixel_id: px, event_name: 'Lead', event_id: 'w-1' },
        { pixel_id: px, event_name: 'Lead', event_id: 'w-2' },
        { pixel_id: px },
      ];
      assert.equal((await batch(owner, { events })).json().accepted, 2);
      const claimed = await h.store.webhooks.claimDue({
        now: new Date(Date.now() + 60_000),
        limit: 1000,
        perEndpoint: 100,
        open: {},
        leaseMs: 30_000,
        owner: 'test',
      });
      const mine = claimed.filter((d) => d.endpoint.id === hook.json().id);
      assert.deepEqual(mine.map((d) => JSON.parse(d.body).data.event_id).sort(), ['w-1', 'w-2']);
    });

    it('takes 1,000 events and bodies beyond the single-event limit', async () => {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        pixel_id: pixelId,
        event_name: 'PageView',
        event_id: `many-${i}`,
        url: `https://shop.example.com/products/${'x'.repeat(20)}/${i}`,
      }));
      const res = await batch(acme, { events });
      assert.equal(res.statusCode, 200);
      assert.ok(Buffer.byteLength(JSON.stringify({ events })) > 32_768);
      assert.equal(res.json().accepted, 1000);
    });

    it('takes an event nested as deep as POST /v1/track takes it alone', async () => {
      // 62 levels inside custom_data: 64 with the event's own object, the limit for one event.
      const deep = {
        pixel_id: pixelId,
        event_name: 'Deep',
        event_id: 'deep-1',
        custom_data: { a: JSON.parse(`${'['.repeat(62)}${']'.repeat(62)}`) },
      };
      assert.equal((await post(acme, '/v1/track', deep)).statusCode, 200);
      const res = await batch(acme, { events: [{ ...deep, event_id: 'deep-2' }] });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().accepted, 1);
      // One level more is too deep in either.
      const deeper = {
        ...deep,
        custom_data: { a: JSON.parse(`[${JSON.stringify(deep.custom_data.a)}]`) },
      };
      assert.equal((await post(acme, '/v1/track', deeper)).statusCode, 400);
      assert.equal((await batch(acme, { events: [deeper] })).statusCode, 400);
    });

    it('refuses query parameters: it takes none', async () => {
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch?dry_run=1',
        payload: { events: [{ pixel_id: pixelId, event_name: 'Lead' }] },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, 'Unknown parameter: dry_run');
    });

    it('refuses a malformed envelope as a whole', async () => {
      const invalid = async (payload: unknown, message: string, field?: string) => {
        const res = await batch(acme, payload);
        assert.equal(res.statusCode, 400, res.body);
        assert.deepEqual(res.json(), {
          error: 'Invalid request',
          message,
          ...(field !== undefined && { field }),
        });
      };
      await invalid({}, 'Missing required field: events', 'events');
      await invalid({ events: {} }, 'Invalid field: events must be an array', 'events');
      await invalid({ events: [] }, 'Invalid field: events must have at least 1 item', 'events');
      await invalid(
        { events: Array.from({ length: 1001 }, () => ({})) },
        'Invalid field: events must have at most 1000 items',
        'events',
      );
      await invalid({ events: [{}], sent_at: 'now' }, 'Unknown field: sent_at', 'sent_at');
      await invalid([], 'Request body must be a JSON object');
    });

    it('is 413 above 524,288 bytes, and checks the key before reading the body', async () => {
      const big = {
        events: [{ pixel_id: pixelId, event_name: 'Lead', title: 'x'.repeat(530_000) }],
      };
      const res = await batch(acme, big);
      assert.equal(res.statusCode, 413);
      assert.deepEqual(res.json(), {
        error: 'Payload too large',
        message: 'Request body exceeds 524288 bytes',
      });
      const anonymous = await h.app.inject({
        method: 'POST',
        url: '/v1/track/batch',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(big),
      });
      assert.equal(anonymous.statusCode, 401);
    });
  });
}

for (const kind of await testStores()) {
  describe(`POST /v1/track/batch, batches in flight [${kind.name}]`, () => {
    it("refuses an account's batch past its bound with a 503, never another account's", async () => {
      const h = await startHarness(kind, {
        batchAdmission: { perAccount: 1, waitingPerAccount: 0 },
      });
      try {
        const acme = await h.account('pro');
        const other = await h.account('pro');
        const acmePixel = await h.pixel(acme);
        const otherPixel = await h.pixel(other);
        const url = new URL(await h.app.listen({ port: 0, host: '127.0.0.1' }));
        // Acme's one slot: a batch whose body is still arriving.
        const arrived = once(h.app.server, 'request') as Promise<[IncomingMessage]>;
        const socket = connect(Number(url.port), '127.0.0.1');
        await once(socket, 'connect');
        socket.write(
          `POST /v1/track/batch HTTP/1.1\r\nHost: x\r\n${Object.entries(acme.headers)
            .map(([k, v]) => `${k}: ${v}`)
            .join(
              '\r\n',
            )}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"events":[`,
        );
        const [held] = await arrived;
        while (held.listenerCount('data') === 0) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        const send = (owner: TestAccount, px: string, eventId: string) =>
          h.request(owner, {
            method: 'POST',
            url: '/v1/track/batch',
            payload: { events: [{ pixel_id: px, event_name: 'Lead', event_id: eventId }] },
          });
        const refused = await send(acme, acmePixel, 'refused');
        assert.equal(refused.statusCode, 503);
        assert.equal(refused.headers['retry-after'], '1');
        assert.deepEqual(refused.json(), {
          error: 'Service unavailable',
          message: 'Too many batches in progress; nothing was stored',
        });
        assert.equal((await send(other, otherPixel, 'other')).statusCode, 200);
        // The client that held the slot hangs up: its slot is freed with its response.
        socket.destroy();
        let after = await send(acme, acmePixel, 'after');
        for (let i = 0; after.statusCode === 503 && i < 100; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          after = await send(acme, acmePixel, 'after');
        }
        assert.equal(after.statusCode, 200);
        const listed = await h.request(acme, {
          method: 'GET',
          url: `/v1/pixels/${acmePixel}/events`,
        });
        assert.deepEqual(
          (listed.json().events as Array<{ event_id: string }>).map((e) => e.event_id),
          ['after'],
        );
      } finally {
        await h.close();
      }
    });
  });
}
