/**
 * Hostile input on `POST /v1/collect`, the one write route a web page can reach without a
 * secret: fuzzed bodies (random JSON, mutated valid bodies, non-JSON, wrong types in every
 * field), origins, Cookie and User-Agent headers, content types, and oversized headers over
 * real HTTP. Whatever arrives: never a 500, every error in the `{error, message}` shape, and
 * nothing stored from an origin that is not one of the pixel's sites. Both stores; the number
 * of requests is set by TRACKWAY_FUZZ_RUNS.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type Harness, startHarness, type TestAccount, testStores } from './harness.ts';

/**
 * Requests per store and property on SQLite (a quarter of that on PostgreSQL): over 10,000 in
 * all, the count, in about half a minute.
 */
const RUNS = Number(process.env['TRACKWAY_FUZZ_RUNS'] ?? 4_000);
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0';

const ALLOWED = [
  'https://shop.example.com',
  'https://www.shop.example.com',
  'http://t.example.org',
];
const REFUSED = fc.oneof(
  fc.constantFrom(
    'https://evil.example',
    'https://evilshop.example.com',
    'https://shop.example.com.evil.example',
    'null',
    '',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'https://shop.example.com@evil.example',
    'https://xn--shp-example-com.evil',
    'HTTPS://SHOP.EXAMPLE.COM.', // a trailing dot is another name
  ),
  fc
    .webUrl()
    .filter((u) => !/(^|\.)shop\.example\.com$|^t\.example\.org$/.test(new URL(u).hostname)),
  fc.string({ maxLength: 300 }),
);

const field = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 30 }), { maxKeys: 5 }),
  fc.string({ maxLength: 3000, unit: 'binary' }),
);

for (const kind of await testStores()) {
  const runs = kind.name === 'sqlite' ? RUNS : Math.ceil(RUNS / 4);
  describe(`hostile input on /v1/collect [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let pixelId = '';
    let key = '';
    let requests = 0;

    before(async () => {
      // No rate limiter: the fuzz sends far more than 120 a minute from one address.
      h = await startHarness(kind, { rateLimiter: null });
      acme = await h.account('pro');
      pixelId = await h.pixel(acme, {
        name: 'Shop',
        domain: 'shop.example.com',
        tracking_domain: 't.example.org',
      });
      key = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}` })).json()
        .publishable_key;
    });
    after(async () => {
      console.log(`collect hostile input [${kind.name}]: ${requests} requests, 0 × 500`);
      await h.close();
    });

    const valid = () => ({
      key,
      event_name: 'PageView',
      url: 'https://shop.example.com/',
      anonymous_id: 'tw.1.abc',
      ids: { fbclid: 'IwAR1' },
      cookies: { _fbp: 'fb.1.1.1', _ga: 'GA1.1.1.1' },
    });
    const body = fc.oneof(
      // A valid body with one field replaced, added or removed.
      fc
        .record({
          name: fc.constantFrom(
            'key',
            'event_name',
            'event_id',
            'url',
            'referrer',
            'title',
            'value',
            'currency',
            'custom_data',
            'consent',
            'anonymous_id',
            'ids',
            'cookies',
            'user_data',
            '__proto__',
            'constructor',
          ),
          value: field,
          drop: fc.boolean(),
        })
        .map(({ name, value, drop }) => {
          const b: Record<string, unknown> = valid();
          if (drop) delete b[name];
          else Object.defineProperty(b, name, { value, enumerable: true, writable: true });
          return JSON.stringify(b);
        }),
      fc.json({ maxDepth: 4 }),
      fc.string({ maxLength: 500 }),
      fc.constant('{"key":'),
      fc.constant(`{${'"a":{'.repeat(200)}`),
      fc.constant(JSON.stringify({ ...valid(), custom_data: { pad: 'x'.repeat(17_000) } })),
    );
    const contentType = fc.constantFrom(
      'application/json',
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
    );

    const checkAnswer = (status: number, text: string, what: string) => {
      assert.notEqual(status, 500, `${what}: ${text.slice(0, 300)}`);
      assert.ok(status < 500, `${what}: ${status}`);
      if (status >= 400) {
        const error = JSON.parse(text);
        assert.equal(typeof error.error, 'string', what);
        assert.equal(typeof error.message, 'string', what);
      }
    };
    const stored = async () =>
      (await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}/events?limit=1` })).json()
        .total as number;

    it('stores nothing from a refused origin, whatever the body, cookies or user agent', async () => {
      await fc.assert(
        fc.asyncProperty(
          REFUSED,
          body,
          contentType,
          fc.string({ maxLength: 200 }),
          async (origin, payload, type, cookie) => {
            requests++;
            const res = await h.app.inject({
              method: 'POST',
              url: '/v1/collect',
              headers: {
                ...(origin === '' ? {} : { origin }),
                'user-agent': UA,
                ...(type === '' ? {} : { 'content-type': type }),
                cookie: cookie.replace(/[\r\n]/g, ''),
              },
              payload,
            });
            checkAnswer(res.statusCode, res.body, `${origin} ${payload.slice(0, 80)}`);
            assert.notEqual(res.statusCode, 200, origin);
            assert.equal(res.headers['access-control-allow-origin'], undefined);
            assert.equal(res.headers['set-cookie'], undefined);
          },
        ),
        { numRuns: runs },
      );
      assert.equal(await stored(), 0, 'nothing stored from refused origins');
    });

    it('never answers 500 to fuzzed bodies, cookies and user agents from the pixel site', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...ALLOWED),
          body,
          contentType,
          fc.oneof(fc.string({ maxLength: 300 }), fc.constant('_fbp=;_fbc=fb.1.;_tw_id="x')),
          fc.oneof(fc.constant(UA), fc.string({ maxLength: 600 })),
          async (origin, payload, type, cookie, ua) => {
            requests++;
            const res = await h.app.inject({
              method: 'POST',
              url: '/v1/collect',
              headers: {
                origin,
                host: 'shop.example.com',
                'user-agent': ua.replace(/[\r\n]/g, ''),
                ...(type === '' ? {} : { 'content-type': type }),
                cookie: cookie.replace(/[\r\n]/g, ''),
              },
              payload,
            });
            checkAnswer(res.statusCode, res.body, payload.slice(0, 120));
            for (const c of ([] as string[]).concat(res.headers['set-cookie'] ?? [])) {
              // Nothing the page sent can end the header or add an attribute of its own.
              assert.match(
                c,
                /^(_tw_id|_fbp|_fbc)=[^;\s]+; Domain=example\.com; Path=\/; Max-Age=\d+; SameSite=Lax$/,
              );
            }
          },
        ),
        { numRuns: runs },
      );
    });

    it('survives huge and malformed headers over real HTTP', async () => {
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
      const send = async (headers: Record<string, string>, payload: string) => {
        requests++;
        const res = await fetch(`${base}/v1/collect`, { method: 'POST', headers, body: payload });
        const text = await res.text();
        // Node refuses headers over its limit itself (431) before any route runs.
        if (res.status !== 431) checkAnswer(res.status, text, JSON.stringify(headers).slice(0, 80));
        return res.status;
      };
      const good = JSON.stringify(valid());
      const before = await stored();
      let accepted = 0;
      for (const size of [1_000, 8_000, 15_000, 40_000]) {
        const refused = await send(
          { origin: 'https://evil.example', cookie: `_fbp=${'a'.repeat(size)}`, 'user-agent': UA },
          good,
        );
        assert.notEqual(refused, 200);
        // A huge first-party cookie: stored while under Node's header limit, never a 500.
        if (
          (await send(
            { origin: ALLOWED[0]!, cookie: `_fbc=${'b'.repeat(size)}`, 'user-agent': UA },
            good,
          )) === 200
        ) {
          accepted++;
        }
        // A huge user agent: stored without it (over 512 characters it is no match key).
        if (
          (await send({ origin: ALLOWED[0]!, 'user-agent': `${UA} ${'x'.repeat(size)}` }, good)) ===
          200
        ) {
          accepted++;
        }
        await send({ origin: `https://${'a'.repeat(size)}.example`, 'user-agent': UA }, good);
      }
      assert.ok(accepted >= 4, `${accepted} accepted`);
      assert.equal(await stored(), before + accepted, 'only the allowed origin stored anything');
    });
  });
}
