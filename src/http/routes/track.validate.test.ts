import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { PLATFORM_MODULES as PLATFORM_ADAPTERS } from '../../domain/forwarding/platforms/registry.ts';

const META = { pixel_id: '123456789012345', access_token: 'EAABsecret-token-wxyz' };
const GA4 = { measurement_id: 'G-ABC123', api_secret: 'ga4-secret-qrst' };
const TIKTOK = { pixel_code: 'CABCDEFGHIJ1234567', access_token: 'tt-secret-token-mnop' };

for (const kind of await testStores()) {
  describe(`POST /v1/track/validate [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixel: string;
    let meta: string;
    let ga4: string;

    const destination = async (px: string, payload: Record<string, unknown>) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${px}/destinations`,
        payload,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const validate = (owner: TestAccount, payload: unknown) =>
      h.request(owner, { method: 'POST', url: '/v1/track/validate', payload: payload as object });
    const listed = async (px: string) =>
      (await h.request(acme, { method: 'GET', url: `/v1/pixels/${px}/events` })).json();

    const body = (px: string) => ({
      pixel_id: px,
      event_name: 'Purchase',
      event_id: 'order-7',
      value: 20,
      currency: 'usd',
      timestamp: new Date(h.clock.now().getTime() - 60_000).toISOString(),
      url: 'https://shop.example.com/thanks',
      user_data: {
        email: ' Jane@Example.com ',
        client_ip_address: '203.0.113.7',
        client_user_agent: 'Mozilla/5.0',
      },
      custom_data: { order_id: '7' },
    });

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
      pixel = await h.pixel(acme);
      meta = await destination(pixel, { type: 'meta', config: META });
      ga4 = await destination(pixel, { type: 'ga4', config: GA4 });
    });
    after(() => h.close());

    it('answers the record and each destination, stores nothing, and matches what the worker sends', async () => {
      const res = await validate(acme, body(pixel));
      assert.equal(res.statusCode, 200, res.body);
      const answer = res.json();
      assert.equal(answer.valid, true);
      assert.equal(answer.event.event_id, 'order-7');
      assert.equal(answer.event.currency, 'USD');
      assert.equal(answer.event.action_source, 'website');
      assert.equal(answer.event.match_quality.keys.includes('email'), true);
      assert.match(answer.event.user_data.email, /^[0-9a-f]{64}$/);
      assert.equal(answer.destinations.length, 2);
      const m = answer.destinations.find(
        (d: { destination_id: string }) => d.destination_id === meta,
      );
      const g = answer.destinations.find(
        (d: { destination_id: string }) => d.destination_id === ga4,
      );
      assert.equal(m.platform, 'meta');
      assert.equal(g.platform, 'ga4');
      assert.equal(m.would_forward, true);
      assert.equal(m.reason, undefined);
      assert.equal(g.would_forward, false);
      assert.equal(g.reason, 'missing user_data.ga_client_id, which GA4 requires as client_id');
      assert.equal(g.payload, null);
      // Secrets are never shown: the body only, no token or API secret anywhere.
      assert.doesNotMatch(res.body, /EAABsecret|ga4-secret|access_token|api_secret/);

      // Nothing stored: no event, so no forwarding job either.
      assert.equal((await listed(pixel)).total, 0);

      // Now tracked for real: the record is the one stored, the payload the one the worker
      // builds from what the store loads back.
      assert.equal((await h.track(acme, body(pixel))).statusCode, 200);
      const [stored] = (await listed(pixel)).events;
      const { received_at: _a, forwarding: _f, ...storedRest } = stored;
      const { received_at: _b, forwarding: _g, ...validatedRest } = answer.event;
      assert.deepEqual(validatedRest, storedRest);
      const loaded = await h.store.matchKeys.forwardable(acme.account.id, pixel, ['order-7']);
      const saved = await h.store.destinations.getDestination(acme.account.id, pixel, meta);
      assert.ok(saved);
      const built = PLATFORM_ADAPTERS.meta.build(loaded, saved.config, { now: h.clock.now() });
      assert.equal(built.requests.length, 1);
      assert.deepEqual(m.payload, built.requests[0]?.body);
      const savedGa4 = await h.store.destinations.getDestination(acme.account.id, pixel, ga4);
      assert.ok(savedGa4);
      const ga4Built = PLATFORM_ADAPTERS.ga4.build(loaded, savedGa4.config, { now: h.clock.now() });
      assert.deepEqual(ga4Built.skipped, [{ eventId: 'order-7', reason: g.reason }]);
    });

    it('shows a GA4 payload once ga_client_id is sent, and says why a destination would not forward', async () => {
      const px = await h.pixel(acme);
      const g = await destination(px, { type: 'ga4', config: GA4 });
      const filtered = await destination(px, { type: 'meta', config: META, events: ['Lead'] });
      const off = await destination(px, { type: 'tiktok', config: TIKTOK, enabled: false });
      const input = body(px);
      const res = await validate(acme, {
        ...input,
        user_data: { ...input.user_data, ga_client_id: '1234567890.1732473730' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const byId = new Map(
        res.json().destinations.map((d: { destination_id: string }) => [d.destination_id, d]),
      );
      const ga = byId.get(g) as Record<string, unknown>;
      assert.equal(ga['would_forward'], true);
      assert.equal(
        (ga['payload'] as Record<string, unknown>)['client_id'],
        '1234567890.1732473730',
      );
      assert.deepEqual(byId.get(filtered), {
        destination_id: filtered,
        platform: 'meta',
        would_forward: false,
        reason: "event_name Purchase is not in the destination's events filter",
        consent: 'no consent given: sent as usual',
        payload: (byId.get(filtered) as Record<string, unknown>)['payload'],
      });
      const tiktok = byId.get(off) as Record<string, unknown>;
      assert.equal(tiktok['would_forward'], false);
      assert.equal(tiktok['reason'], 'The destination is disabled');
      assert.doesNotMatch(res.body, /tt-secret|ga4-secret|EAABsecret/);
      assert.equal((await listed(px)).total, 0);
    });

    it('warns of user_data it would drop, as /v1/track does, and leaves it out (§19)', async () => {
      const input = {
        pixel_id: pixel,
        event_name: 'Purchase',
        value: 59,
        currency: 'EUR',
        url: 'https://shop.example.com/thanks',
        user_data: {
          email: 'jane@example.com',
          phone: '650 555 0199',
          country: 'UK',
          client_ip_address: '203.0.113.7',
          client_user_agent: 'Mozilla/5.0',
        },
      };
      const res = await validate(acme, input);
      assert.equal(res.statusCode, 200, res.body);
      const answer = res.json();
      assert.deepEqual(answer.warnings, [
        'user_data.phone dropped: must be in E.164 format',
        'user_data.country dropped: must be an ISO 3166-1 alpha-2 code',
      ]);
      assert.deepEqual(answer.event.dropped, ['user_data.phone', 'user_data.country']);
      assert.deepEqual(Object.keys(answer.event.user_data).sort(), [
        'client_ip_address',
        'client_user_agent',
        'email',
      ]);
      const m = answer.destinations.find(
        (d: { destination_id: string }) => d.destination_id === meta,
      );
      assert.equal(m.would_forward, true, m.reason);
      const sent = m.payload.data[0].user_data;
      assert.ok(sent.em, 'the email still goes');
      assert.equal(sent.ph, undefined, 'the dropped phone does not');
      assert.equal(sent.country, undefined, 'nor the dropped country');
      const tracked = await h.track(acme, input);
      assert.deepEqual(tracked.json().warnings, answer.warnings);
    });

    it('answers exactly the 400 /v1/track answers', async () => {
      const bad: unknown[] = [
        {},
        { event_name: 'Lead' },
        { pixel_id: pixel },
        { pixel_id: pixel, event_name: 'Lead', value: 'x' },
        { pixel_id: pixel, event_name: 'Lead', currency: 'dollars' },
        { pixel_id: pixel, event_name: 'Lead', surprise: 1 },
        { pixel_id: pixel, event_name: 'Lead', user_data: { email: 42 } },
        { pixel_id: pixel, event_name: 'Lead', timestamp: '2999-01-01T00:00:00Z' },
        [],
        42,
      ];
      for (const payload of bad) {
        const tracked = await h.track(acme, payload);
        const validated = await validate(acme, payload);
        assert.equal(tracked.statusCode, 400, JSON.stringify(payload));
        assert.equal(validated.statusCode, 400, JSON.stringify(payload));
        assert.deepEqual(validated.json(), tracked.json());
      }
    });

    it("answers 404 for another account's pixel, and a paused pixel as /v1/track does", async () => {
      const theirs = await h.pixel(other);
      const res = await validate(acme, body(theirs));
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), (await h.track(acme, body(theirs))).json());
      const paused = await h.pixel(acme);
      const update = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${paused}`,
        payload: { status: 'paused' },
      });
      assert.equal(update.statusCode, 200, update.body);
      const validated = await validate(acme, body(paused));
      const tracked = await h.track(acme, body(paused));
      assert.equal(validated.statusCode, tracked.statusCode);
      assert.deepEqual(validated.json(), tracked.json());
    });

    it('counts against the rate limit, a 400 included, as /v1/track does', async () => {
      const first = await validate(acme, body(pixel));
      const bad = await validate(acme, { event_name: 'Lead' });
      assert.equal(bad.statusCode, 400);
      assert.match(String(first.headers['x-ratelimit-remaining']), /^\d+$/);
      assert.equal(
        Number(bad.headers['x-ratelimit-remaining']),
        Number(first.headers['x-ratelimit-remaining']) - 1,
      );
    });

    it("may be called with an ingest key, which sees the event's own validity only", async () => {
      const created = await h.request(acme, {
        method: 'POST',
        url: '/v1/keys',
        payload: { name: 'shop backend', scope: 'ingest' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const res = await h.request(null, {
        method: 'POST',
        url: '/v1/track/validate',
        headers: { authorization: `Bearer ${created.json().key}` },
        payload: body(pixel),
      });
      assert.equal(res.statusCode, 200, res.body);
      // The pixel has a Meta and a GA4 destination (one suspended, below), a TikTok one too:
      // none of their ids, platform ids or states reach an ingest key.
      const tiktok = await destination(pixel, { type: 'tiktok', config: TIKTOK });
      await h.store.destinations.updateDestination(acme.account.id, pixel, meta, (d) => ({
        ...d,
        state: 'suspended',
        lastError: 'Meta error 190: token expired',
      }));
      const ingest = await h.request(null, {
        method: 'POST',
        url: '/v1/track/validate',
        headers: { authorization: `Bearer ${created.json().key}` },
        payload: body(pixel),
      });
      assert.equal(ingest.statusCode, 200, ingest.body);
      assert.deepEqual(Object.keys(ingest.json()).sort(), ['event', 'valid']);
      assert.equal(ingest.json().event.event_id, 'order-7');
      for (const secret of [
        meta,
        ga4,
        tiktok,
        TIKTOK.pixel_code,
        GA4.measurement_id,
        'Meta error 190',
        'suspended',
      ]) {
        assert.ok(!ingest.body.includes(secret), `an ingest key sees ${secret}`);
      }
      // Bad input still gets the same 400 as /v1/track.
      const bad = await h.request(null, {
        method: 'POST',
        url: '/v1/track/validate',
        headers: { authorization: `Bearer ${created.json().key}` },
        payload: { ...body(pixel), event_name: '' },
      });
      assert.equal(bad.statusCode, 400);
      // A full key still sees every destination, the suspension included.
      const full = (await validate(acme, body(pixel))).json();
      assert.equal(full.destinations.length, 3);
      assert.ok(JSON.stringify(full).includes('Meta error 190'));
    });
  });
}
