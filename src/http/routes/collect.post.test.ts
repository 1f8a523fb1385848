import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { COLLECT_PER_IP_PER_MINUTE, MAX_COLLECT_BODY_BYTES } from './collect.post.ts';

const UA =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SHOP = 'https://shop.example.com';

for (const kind of await testStores()) {
  describe(`POST /v1/collect [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let pixelId: string;
    let key: string;
    let n = 0;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      pixelId = await h.pixel(acme, {
        name: 'Shop',
        domain: 'shop.example.com',
        tracking_domain: 'track.example.net',
      });
      key = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}` })).json()
        .publishable_key;
    });
    after(() => h.close());

    const body = (extra: Record<string, unknown> = {}) => ({
      key,
      event_name: 'PageView',
      event_id: `pv-${kind.name}-${++n}`,
      url: `${SHOP}/products/1`,
      anonymous_id: 'tw.1732473730000.abcDEF123456',
      ...extra,
    });
    const collect = (
      payload: unknown,
      headers: Record<string, string> = {},
      extra: Partial<InjectOptions> = {},
    ) =>
      h.app.inject({
        method: 'POST',
        url: '/v1/collect',
        headers: { origin: SHOP, 'user-agent': UA, host: 'shop.example.com', ...headers },
        payload: payload as InjectOptions['payload'],
        ...extra,
      });
    const stored = async (eventId: string) => {
      const res = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events/${encodeURIComponent(eventId)}`,
      });
      return res.statusCode === 200 ? res.json() : null;
    };

    it('stores a browser event from the pixel site: CORS echoed, source browser, keys hashed', async () => {
      const payload = body({ ids: { fbclid: 'IwAR-click' }, cookies: { _ga: 'GA1.1.123.456' } });
      const res = await collect(payload);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { event_id: payload.event_id });
      assert.equal(res.headers['access-control-allow-origin'], SHOP);
      assert.equal(res.headers['access-control-allow-credentials'], 'true');
      const event = await stored(payload.event_id);
      assert.ok(event, 'stored');
      assert.equal(event.source, 'browser');
      assert.equal(event.event_name, 'PageView');
      assert.equal(event.url, payload.url);
      // Only hashes in the record: the IP and user agent are the connection's, never shown raw.
      for (const k of ['client_ip_address', 'client_user_agent', 'fbc', 'fbp', 'ga_client_id']) {
        assert.match(event.user_data[k], /^[0-9a-f]{64}$/, k);
      }
      assert.ok(!JSON.stringify(event).includes(UA));
    });

    it('takes the pixel domain, its subdomains and its tracking domain; nothing else', async () => {
      for (const origin of [
        SHOP,
        'https://www.shop.example.com',
        'http://track.example.net:8443',
      ]) {
        const res = await collect(body(), { origin });
        assert.equal(res.statusCode, 200, `${origin}: ${res.body}`);
        assert.equal(res.headers['access-control-allow-origin'], origin);
      }
      const refused = [
        'https://evil.example',
        'https://evilshop.example.com',
        'https://shop.example.com.evil.example',
        'https://sub.track.example.net',
        'null',
        'file://',
        'not a url',
      ];
      for (const origin of refused) {
        const payload = body();
        const res = await collect(payload, { origin });
        assert.equal(res.statusCode, 403, `${origin}: ${res.body}`);
        assert.equal(res.headers['access-control-allow-origin'], undefined, origin);
        assert.equal(res.headers['access-control-allow-credentials'], undefined, origin);
        assert.equal(await stored(payload.event_id), null, `${origin} stored nothing`);
      }
      const payload = body();
      const missing = await h.app.inject({
        method: 'POST',
        url: '/v1/collect',
        headers: { 'user-agent': UA },
        payload,
      });
      assert.equal(missing.statusCode, 403);
      assert.equal(await stored(payload.event_id), null);
    });

    it('refuses an unknown key, an API key and no key with 401', async () => {
      for (const k of ['tw_pub_000000000000000000000000', acme.apiKey, undefined, 42]) {
        const res = await collect({ ...body(), key: k });
        assert.equal(res.statusCode, 401, `${String(k)}: ${res.body}`);
        assert.equal(res.headers['access-control-allow-origin'], undefined);
      }
    });

    it('takes text/plain (sendBeacon), refuses bodies over 16 KB', async () => {
      const payload = body();
      const res = await collect(JSON.stringify(payload), {
        'content-type': 'text/plain;charset=UTF-8',
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(await stored(payload.event_id));
      const big = body({ custom_data: { pad: 'x'.repeat(MAX_COLLECT_BODY_BYTES) } });
      const tooBig = await collect(JSON.stringify(big), { 'content-type': 'text/plain' });
      assert.equal(tooBig.statusCode, 413);
      assert.equal(await stored(big.event_id), null);
    });

    it('drops unknown fields (user_data included) and counts them; takes the IP from the connection', async () => {
      const metricsBefore = await dropped();
      const payload = body({
        user_data: { email: 'jane@example.com', client_ip_address: '203.0.113.9' },
        ip: '203.0.113.9',
        future_field: { a: 1 },
        ids: { fbclid: 'abc', unknown_click: 'x' },
        cookies: { _fbp: 'fb.1.1732473730000.42', session: 'secret', _ga_ABC123: 'GS1.1.99.1' },
      });
      const res = await collect(payload);
      assert.equal(res.statusCode, 200, res.body);
      const event = await stored(payload.event_id);
      assert.equal(event.user_data.email, undefined, 'no contact data from browsers');
      const { createHash } = await import('node:crypto');
      const sha = (v: string) => createHash('sha256').update(v).digest('hex');
      assert.equal(event.user_data.client_ip_address, sha('127.0.0.1'));
      assert.equal(event.user_data.fbp, sha('fb.1.1732473730000.42'));
      assert.equal((await dropped()) - metricsBefore, 5);
    });

    it('limits each IP to 120 events a minute per pixel (fixed UTC minute), then 429', async () => {
      // Start of a fresh minute, so the window cannot roll over mid-test.
      const now = h.clock.now().getTime();
      h.clock.set(new Date(Math.ceil(now / 60_000) * 60_000 + 60_000));
      const headers = { 'x-test': '1' };
      let last = 0;
      for (let i = 0; i < COLLECT_PER_IP_PER_MINUTE; i++) {
        last = (await collect(body(), headers)).statusCode;
        assert.equal(last, 200, `request ${i + 1}`);
      }
      const payload = body();
      const limited = await collect(payload, headers);
      assert.equal(limited.statusCode, 429);
      assert.equal(await stored(payload.event_id), null);
      h.clock.advance(60_000);
      assert.equal((await collect(body())).statusCode, 200);
    });

    it('answers known bots 200 without storing, and counts them', async () => {
      const before = await metric('trackway_collect_bots_total');
      for (const ua of [
        'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
      ]) {
        const payload = body();
        const res = await collect(payload, { 'user-agent': ua });
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().event_id, payload.event_id);
        assert.equal(await stored(payload.event_id), null);
      }
      assert.equal((await metric('trackway_collect_bots_total')) - before, 2);
    });

    it('sets first-party cookies on a host of the same site, none elsewhere or under denied consent', async () => {
      const first = await collect(body({ ids: { fbclid: 'IwAR-new' } }), {
        host: 'shop.example.com',
      });
      const cookies = ([] as string[]).concat(first.headers['set-cookie'] ?? []);
      const named = (name: string) => cookies.find((c) => c.startsWith(`${name}=`));
      assert.match(
        named('_tw_id') ?? '',
        /^_tw_id=tw\.1732473730000\.abcDEF123456; Domain=example\.com; Path=\/; Max-Age=34560000; SameSite=Lax$/,
      );
      assert.match(named('_fbp') ?? '', /^_fbp=fb\.1\.\d+\.\d+; Domain=example\.com;/);
      assert.match(named('_fbc') ?? '', /^_fbc=fb\.1\.\d+\.IwAR-new; Domain=example\.com;/);
      assert.ok(cookies.every((c) => !/httponly/i.test(c)));

      // The visitor has _fbp (Cookie header) and an _fbc of the same click: only _tw_id.
      const again = await collect(body({ ids: { fbclid: 'IwAR-new' } }), {
        cookie: `_fbp=fb.1.1.2; _fbc=fb.1.1.IwAR-new`,
      });
      assert.deepEqual(
        ([] as string[]).concat(again.headers['set-cookie'] ?? []).map((c) => c.split('=')[0]),
        ['_tw_id'],
      );
      // A new click replaces the old _fbc.
      const newer = await collect(body({ ids: { fbclid: 'IwAR-newer' } }), {
        cookie: `_fbp=fb.1.1.2; _fbc=fb.1.1.IwAR-new`,
      });
      assert.ok(
        ([] as string[])
          .concat(newer.headers['set-cookie'] ?? [])
          .some((c) => c.startsWith('_fbc=fb.1.') && c.includes('.IwAR-newer;')),
      );

      // The tracking domain is another site here: a cookie there would be third-party.
      const elsewhere = await collect(body(), { host: 'track.example.net' });
      assert.equal(elsewhere.statusCode, 200);
      assert.equal(elsewhere.headers['set-cookie'], undefined);

      const payload = body({ consent: { ad_user_data: 'denied' }, ids: { fbclid: 'IwAR-x' } });
      const denied = await collect(payload);
      assert.equal(denied.statusCode, 200, denied.body);
      assert.equal(denied.headers['set-cookie'], undefined);
      const event = await stored(payload.event_id);
      assert.equal(event.user_data, null, 'no identifier kept under denied consent');
      // The consent is the record's, as for a server event (contract §16).
      assert.deepEqual(event.consent, { ad_user_data: 'denied' });
    });

    it('deduplicates on (pixel, event_id) like server events', async () => {
      const payload = body();
      assert.equal((await collect(payload)).statusCode, 200);
      const again = await collect(payload);
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().event_id, payload.event_id);
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?limit=100`,
      });
      assert.equal(
        list.json().events.filter((e: { event_id: string }) => e.event_id === payload.event_id)
          .length,
        1,
      );
    });

    it('forwards to destinations by source: sources ["server"] takes no browser event', async () => {
      const create = (sources?: string[]) =>
        h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixelId}/destinations`,
          payload: {
            type: 'meta',
            config: { pixel_id: '123456789012345', access_token: 'EAABtoken1234' },
            ...(sources && { sources }),
          },
        });
      const serverOnly = await create(['server']);
      assert.equal(serverOnly.statusCode, 201, serverOnly.body);
      assert.deepEqual(serverOnly.json().sources, ['server']);
      const both = await create();
      assert.equal(both.json().sources, null);
      const payload = body();
      assert.equal((await collect(payload)).statusCode, 200);
      const event = await stored(payload.event_id);
      assert.deepEqual(
        event.forwarding.map((f: { destination_id: string }) => f.destination_id),
        [both.json().id],
      );
      const server = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: `srv-${n}`,
      });
      assert.equal(server.statusCode, 200);
      const purchase = await stored(`srv-${n}`);
      assert.equal(purchase.source, 'server');
      assert.equal(purchase.forwarding.length, 2);
      for (const d of [serverOnly, both]) {
        await h.request(acme, {
          method: 'DELETE',
          url: `/v1/pixels/${pixelId}/destinations/${d.json().id}`,
        });
      }
    });

    it('commits concurrent hits of one visitor (one batch, one identity row)', async () => {
      const payloads = Array.from({ length: 30 }, () => body({ anonymous_id: 'tw.same.visitor' }));
      const answers = await Promise.all(payloads.map((p) => collect(p)));
      assert.deepEqual(
        answers.map((a) => a.statusCode),
        payloads.map(() => 200),
      );
      for (const p of payloads) assert.ok(await stored(p.event_id), p.event_id);
      const identity = await h.store.matchKeys.visitorKeys(
        acme.account.id,
        pixelId,
        'tw.same.visitor',
        h.clock.now(),
      );
      assert.equal(identity?.matchKeys.clientUserAgent, UA);
    });

    it('answers the preflight for any active pixel site only', async () => {
      const ok = await h.app.inject({
        method: 'OPTIONS',
        url: '/v1/collect',
        headers: {
          origin: 'https://www.shop.example.com',
          'access-control-request-method': 'POST',
        },
      });
      assert.equal(ok.statusCode, 204);
      assert.equal(ok.headers['access-control-allow-origin'], 'https://www.shop.example.com');
      assert.equal(ok.headers['access-control-allow-credentials'], 'true');
      assert.match(String(ok.headers['access-control-allow-methods']), /POST/);
      const bad = await h.app.inject({
        method: 'OPTIONS',
        url: '/v1/collect',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(bad.statusCode, 403);
      assert.equal(bad.headers['access-control-allow-origin'], undefined);
    });

    async function metric(name: string): Promise<number> {
      const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return Number(line?.split(' ')[1] ?? 0);
    }
    function dropped() {
      return metric('trackway_collect_dropped_fields_total');
    }
  });
}
