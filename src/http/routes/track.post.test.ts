import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { revokeKey, setPlan } from '../../domain/accounts/accounts.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`POST /v1/track [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;
    let otherPixel: string;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
      otherPixel = await h.pixel(other);
    });
    after(() => h.close());

    /** A body sent as written: JSON that JSON.stringify cannot produce (1e400, lone "\ud800"). */
    const trackText = (payload: string) =>
      h.request(acme, {
        method: 'POST',
        url: '/v1/track',
        headers: { 'content-type': 'application/json' },
        payload,
      });

    /** The response is exactly the 400 body with this message (and field, when given). */
    const assert400 = (
      res: { statusCode: number; body: string },
      message: string,
      field?: string,
    ) => {
      assert.equal(res.statusCode, 400, res.body);
      const expected: Record<string, string> = { error: 'Invalid request', message };
      if (field !== undefined) expected['field'] = field;
      assert.deepEqual(JSON.parse(res.body), expected);
    };

    const expect400 = async (body: unknown, message: string, field?: string) =>
      assert400(await h.track(acme, body), message, field);

    it('answers 200 with the spec shape and stores the event', async () => {
      const res = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'order-1001',
        value: 49.99,
        currency: 'usd',
        timestamp: '2026-01-15T10:00:00+02:00',
        url: 'https://shop.example.com/checkout',
        custom_data: { order_id: '1001', items: [{ sku: 'A', qty: 2 }] },
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        success: true,
        event_id: 'order-1001',
        message: 'Event tracked',
      });
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?event_name=Purchase`,
      });
      const [event] = list.json().events;
      assert.equal(event.event_id, 'order-1001');
      assert.equal(event.value, 49.99);
      assert.equal(event.currency, 'USD');
      assert.equal(event.timestamp, '2026-01-15T08:00:00.000Z');
      assert.equal(event.status, 'processed');
      assert.deepEqual(event.custom_data, { order_id: '1001', items: [{ sku: 'A', qty: 2 }] });
    });

    it('makes an evt_ UUIDv7 id when the caller sends none', async () => {
      const res = await h.track(acme, { pixel_id: pixelId, event_name: 'PageView' });
      assert.match(
        res.json().event_id,
        /^evt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    });

    it('reports missing required fields by name, pixel_id first', async () => {
      await expect400({ event_name: 'Lead' }, 'Missing required field: pixel_id', 'pixel_id');
      await expect400({ pixel_id: pixelId }, 'Missing required field: event_name', 'event_name');
      await expect400({}, 'Missing required field: pixel_id', 'pixel_id');
      await expect400(
        { event_name: 'Lead', pixel_id: '' },
        'Missing required field: pixel_id',
        'pixel_id',
      );
      await expect400({ pixel_id: '', value: 'x' }, 'Missing required field: pixel_id', 'pixel_id');
      await expect400(
        { pixel_id: pixelId, event_name: '' },
        'Missing required field: event_name',
        'event_name',
      );
    });

    it('rejects bodies that are not a JSON object', async () => {
      for (const payload of ['{"pixel_id":', '[1,2', 'nope']) {
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        assert.equal(res.statusCode, 400);
        assert.deepEqual(res.json(), { error: 'Invalid request', message: 'Malformed JSON body' });
      }
      for (const body of [[], 'text', 42, null]) {
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        assert.deepEqual(res.json(), {
          error: 'Invalid request',
          message: 'Request body must be a JSON object',
        });
      }
      const empty = await h.request(acme, { method: 'POST', url: '/v1/track' });
      assert.equal(empty.statusCode, 400);
      assert.deepEqual(empty.json(), {
        error: 'Invalid request',
        message: 'Request body must be a JSON object',
      });
    });

    it('names the field and the reason for wrong types and formats', async () => {
      const base = { pixel_id: pixelId, event_name: 'Purchase' };
      await expect400(
        { ...base, value: '12.5' },
        'Invalid field: value must be a finite number',
        'value',
      );
      // JSON.stringify cannot write an overflowing number, so send the text itself.
      const huge = await h.request(acme, {
        method: 'POST',
        url: '/v1/track',
        headers: { 'content-type': 'application/json' },
        payload: `{"pixel_id":"${pixelId}","event_name":"Purchase","value":1e999}`,
      });
      assert.deepEqual(huge.json(), {
        error: 'Invalid request',
        message: 'Invalid field: value must be a finite number',
        field: 'value',
      });
      await expect400(
        { ...base, value: null },
        'Invalid field: value must be a finite number',
        'value',
      );
      await expect400(
        { ...base, currency: 'XYZ' },
        'Invalid field: currency must be an ISO 4217 currency code',
        'currency',
      );
      await expect400(
        { ...base, currency: 7 },
        'Invalid field: currency must be a string',
        'currency',
      );
      await expect400(
        { ...base, timestamp: 'yesterday' },
        'Invalid field: timestamp must be an ISO 8601 date-time with an offset (Z or ±hh:mm)',
        'timestamp',
      );
      await expect400(
        { ...base, timestamp: '2026-01-15T10:00:00' },
        'Invalid field: timestamp must be an ISO 8601 date-time with an offset (Z or ±hh:mm)',
        'timestamp',
      );
      await expect400(
        { ...base, timestamp: '2026-02-30T10:00:00Z' },
        'Invalid field: timestamp must be an ISO 8601 date-time with an offset (Z or ±hh:mm)',
        'timestamp',
      );
      const future = new Date(h.clock.now().getTime() + 11 * 60_000).toISOString();
      await expect400(
        { ...base, timestamp: future },
        'Invalid field: timestamp must not be more than 10 minutes in the future',
        'timestamp',
      );
      await expect400(
        { ...base, url: 'ftp://x.example/a' },
        'Invalid field: url must be an absolute http(s) URL',
        'url',
      );
      await expect400(
        { ...base, referrer: '/relative' },
        'Invalid field: referrer must be an absolute http(s) URL',
        'referrer',
      );
      await expect400(
        { ...base, url: `https://a.example/${'x'.repeat(2048)}` },
        'Invalid field: url must be at most 2048 characters',
        'url',
      );
      await expect400(
        { ...base, event_id: 'x'.repeat(129) },
        'Invalid field: event_id must be at most 128 characters',
        'event_id',
      );
      await expect400(
        { ...base, event_id: '' },
        'Invalid field: event_id must not be empty',
        'event_id',
      );
      await expect400(
        { ...base, event_id: 'tab\there' },
        'Invalid field: event_id must be 1 to 128 printable characters',
        'event_id',
      );
      // Invisible format characters (category Cf) would let two different ids look the same.
      for (const invisible of ['\u202E', '\u200B', '\u200D', '\uFEFF', '\u2066']) {
        await expect400(
          { ...base, event_id: `order${invisible}1001` },
          'Invalid field: event_id must be 1 to 128 printable characters',
          'event_id',
        );
      }
      await expect400(
        { ...base, event_name: 'x'.repeat(101) },
        'Invalid field: event_name must be at most 100 characters',
        'event_name',
      );
      await expect400(
        { ...base, user_data: 'me@example.com' },
        'Invalid field: user_data must be an object',
        'user_data',
      );
      // A user_data value of the wrong JSON type still refuses the event (contract §19); one
      // of the right type that cannot be used is dropped instead (tested below).
      await expect400(
        { ...base, user_data: { phone: 6505551212 } },
        'Invalid field: user_data.phone must be a string',
        'user_data.phone',
      );
      const wide = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
      await expect400(
        { ...base, custom_data: wide },
        'Invalid field: custom_data must have at most 100 keys',
        'custom_data',
      );
      await expect400(
        { ...base, custom_data: { blob: 'x'.repeat(16_400) } },
        'Invalid field: custom_data must be at most 16384 bytes serialised',
        'custom_data',
      );
    });

    it('refuses unknown fields instead of dropping them, after type errors', async () => {
      const base = { pixel_id: pixelId, event_name: 'Purchase' };
      await expect400({ ...base, price: 10 }, 'Unknown field: price', 'price');
      await expect400(
        { ...base, user_data: { emial: 'a@b.co' } },
        'Unknown field: user_data.emial',
        'user_data.emial',
      );
      await expect400(
        { ...base, price: 10, value: 'x' },
        'Invalid field: value must be a finite number',
        'value',
      );
      await expect400({ price: 10, value: 'x' }, 'Missing required field: pixel_id', 'pixel_id');
      // A user_data value that cannot be used is dropped (§19), which does not excuse an
      // unknown field beside it: the event is still refused for that.
      await expect400(
        { ...base, price: 10, user_data: { phone: '(650)555-1212' } },
        'Unknown field: price',
        'price',
      );
      await expect400(
        { ...base, user_data: { phone: '(650)555-1212', emial: 'a@b.co' } },
        'Unknown field: user_data.emial',
        'user_data.emial',
      );
      // Formats checked past the schema (against the clock, by size) are wrong-format
      // failures too: they come before an unknown field (contract §3's order).
      await expect400(
        { ...base, price: 10, timestamp: '2999-01-01T00:00:00Z' },
        'Invalid field: timestamp must not be more than 10 minutes in the future',
        'timestamp',
      );
      await expect400(
        { ...base, price: 10, custom_data: { big: 'x'.repeat(16_400) } },
        'Invalid field: custom_data must be at most 16384 bytes serialised',
        'custom_data',
      );
    });

    it('refuses query parameters: it takes none', async () => {
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track?foo=1',
        payload: { pixel_id: pixelId, event_name: 'Lead' },
      });
      assert400(res, 'Unknown parameter: foo', 'foo');
    });

    it('refuses a number too large for a double instead of storing null', async () => {
      const res = await trackText(
        `{"pixel_id":"${pixelId}","event_name":"Lead","custom_data":{"a":{"b":[1,-1e400]},"n":null}}`,
      );
      assert400(
        res,
        'Invalid field: custom_data.a.b.1 must be a finite number',
        'custom_data.a.b.1',
      );
      // A real null is kept as sent.
      const ok = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Lead',
        event_id: 'null-kept',
        custom_data: { n: null },
      });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('counts lengths in characters, and takes any printable event_id', async () => {
      const base = { pixel_id: pixelId, event_name: 'Lead' };
      // 😀 is two UTF-16 units but one character (JSON Schema's maxLength counts characters).
      for (const body of [
        { ...base, event_name: '😀'.repeat(100), event_id: 'emoji-name' },
        { ...base, event_id: 'Bestellung-Müller-€-注文-😀'.padEnd(128, 'ü') },
        { ...base, event_id: 'emoji-phone', user_data: { first_name: '𠀋'.repeat(256) } },
      ]) {
        const res = await h.track(acme, body);
        assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`);
      }
      await expect400(
        { ...base, event_name: '😀'.repeat(101) },
        'Invalid field: event_name must be at most 100 characters',
        'event_name',
      );
      await expect400(
        { ...base, event_id: 'a\u0085b' },
        'Invalid field: event_id must be 1 to 128 printable characters',
        'event_id',
      );
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?limit=100`,
      });
      const ids = list.json().events.map((e: { event_id: string }) => e.event_id);
      assert.ok(ids.includes('Bestellung-Müller-€-注文-😀'.padEnd(128, 'ü')), 'stored as sent');
    });

    it('refuses half a surrogate pair, which no store can keep as sent', async () => {
      const res = await trackText(
        `{"pixel_id":"${pixelId}","event_name":"Lead","title":"E\\ud800"}`,
      );
      assert400(
        res,
        'Invalid field: title must be valid Unicode (it holds an unpaired surrogate)',
        'title',
      );
    });

    it('takes timestamps of any year, 0000–0099 included (no lower bound)', async () => {
      for (const [id, timestamp] of [
        ['year-1', '0001-02-03T04:05:06Z'],
        ['year-99', '0099-12-31T23:59:59.999Z'],
      ] as const) {
        const res = await h.track(acme, {
          pixel_id: pixelId,
          event_name: 'Lead',
          event_id: id,
          timestamp,
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?end_date=0099-12-31`,
      });
      assert.deepEqual(
        list.json().events.map((e: { timestamp: string }) => e.timestamp),
        ['0099-12-31T23:59:59.999Z', '0001-02-03T04:05:06.000Z'],
      );
    });

    it('refuses NUL in any string, nested or as a key, instead of failing in storage', async () => {
      // PostgreSQL text cannot hold U+0000: this used to pass validation and answer 500.
      const base = { pixel_id: pixelId, event_name: 'Purchase', event_id: 'nul-1' };
      const nul = 'must not contain NUL (\\u0000) characters';
      await expect400(
        { ...base, event_name: 'Pur\u0000chase' },
        `Invalid field: event_name ${nul}`,
        'event_name',
      );
      await expect400({ ...base, title: 'a\u0000' }, `Invalid field: title ${nul}`, 'title');
      // A field whose format already excludes NUL keeps its own, more precise reason.
      await expect400(
        { ...base, event_id: 'a\u0000' },
        'Invalid field: event_id must be 1 to 128 printable characters',
        'event_id',
      );
      await expect400(
        { ...base, custom_data: { items: [{ sku: 'A\u0000' }] } },
        `Invalid field: custom_data.items.0.sku ${nul}`,
        'custom_data.items.0.sku',
      );
      await expect400(
        { ...base, custom_data: { 'k\u0000': 1 } },
        `Invalid field: custom_data ${nul}`,
        'custom_data',
      );
      await expect400(
        { ...base, user_data: { em: 'a\u0000@b.co' } },
        `Invalid field: user_data.em ${nul}`,
        'user_data.em',
      );
      // The §3 order holds: a missing field first, an unknown field after.
      await expect400({ event_name: 'x\u0000' }, 'Missing required field: pixel_id', 'pixel_id');
      await expect400(
        { ...base, price: 1, title: '\u0000' },
        `Invalid field: title ${nul}`,
        'title',
      );
      // Query strings and path parameters go through the same validator.
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?event_name=a%00b`,
      });
      assert.equal(list.statusCode, 400, list.body);
      assert.deepEqual(list.json(), {
        error: 'Invalid request',
        message: `Invalid parameter: event_name ${nul}`,
        field: 'event_name',
      });
      const pixel = await h.request(acme, {
        method: 'POST',
        url: '/v1/pixels',
        payload: { name: 'Shop\u0000', domain: 'shop.example.com' },
      });
      assert.equal(pixel.statusCode, 400, pixel.body);
      assert.equal(pixel.json().message, `Invalid field: name ${nul}`);
      // Nothing was stored, and a clean event still goes through.
      assert.equal((await h.track(acme, base)).statusCode, 200);
    });

    it('accepts title and search_string from the standard-events table', async () => {
      const res = await h.track(acme, {
        ...{ pixel_id: pixelId, event_name: 'Search' },
        search_string: 'red shoes',
        title: 'Results',
      });
      assert.equal(res.statusCode, 200, res.body);
    });

    it('refuses prototype-pollution keys, however they are spelled', async () => {
      // Plain, with JSON escapes (which the quick path must not wave through), and the
      // constructor.prototype form; also behind a byte-order mark.
      for (const key of [
        '"__proto__":{"admin":true}',
        '"\\u005f\\u005fproto\\u005F_":{"admin":true}',
        '"\\u005f_pr\\u006fto__":{"admin":true}',
        '"constructor":{"prototype":{"admin":true}}',
        '"c\\u006fnstructor":{"prototype":{"admin":true}}',
      ]) {
        for (const bom of ['', '\ufeff']) {
          const res = await h.request(acme, {
            method: 'POST',
            url: '/v1/track',
            headers: { 'content-type': 'application/json' },
            payload: `${bom}{"pixel_id":"${pixelId}","event_name":"Lead","custom_data":{${key}}}`,
          });
          assert.equal(res.statusCode, 400, `${JSON.stringify(bom)} ${key}: ${res.body}`);
          assert.equal(res.json().error, 'Invalid request');
        }
      }
      assert.equal(({} as Record<string, unknown>)['admin'], undefined);
    });

    it('is 404 for an unknown pixel and for another account’s pixel, alike', async () => {
      const unknown = await h.track(acme, { pixel_id: 'px_doesnotexist0000', event_name: 'Lead' });
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(unknown.json(), {
        error: 'Not found',
        message: 'Pixel not found: px_doesnotexist0000',
      });
      const foreign = await h.track(acme, { pixel_id: otherPixel, event_name: 'Lead' });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), {
        error: 'Not found',
        message: `Pixel not found: ${otherPixel}`,
      });
    });

    it('is 409 for a paused pixel', async () => {
      const paused = await h.pixel(acme, { name: 'Paused', domain: 'p.example.com' });
      await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${paused}`,
        payload: { status: 'paused' },
      });
      const res = await h.track(acme, { pixel_id: paused, event_name: 'Lead' });
      assert.equal(res.statusCode, 409);
      assert.deepEqual(res.json(), {
        error: 'Conflict',
        message: `Pixel is paused: ${paused}`,
        field: 'pixel_id',
      });
    });

    it('is 413 past 32768 bytes and 415 for other content types', async () => {
      const big = await h.request(acme, {
        method: 'POST',
        url: '/v1/track',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          pixel_id: pixelId,
          event_name: 'Lead',
          title: 'x'.repeat(40_000),
        }),
      });
      assert.equal(big.statusCode, 413);
      assert.deepEqual(big.json(), {
        error: 'Payload too large',
        message: 'Request body exceeds 32768 bytes',
      });
      const text = await h.request(acme, {
        method: 'POST',
        url: '/v1/track',
        headers: { 'content-type': 'text/plain' },
        payload: '{}',
      });
      assert.equal(text.statusCode, 415);
      assert.deepEqual(text.json(), {
        error: 'Unsupported media type',
        message: 'Content-Type must be application/json',
      });
      const charset = await h.request(acme, {
        method: 'POST',
        url: '/v1/track',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        payload: JSON.stringify({ pixel_id: pixelId, event_name: 'Lead' }),
      });
      assert.equal(charset.statusCode, 200);
    });

    it('deduplicates on (pixel_id, event_id): the first event wins', async () => {
      const first = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Lead',
        event_id: 'dup-1',
        value: 1,
      });
      assert.equal(first.json().deduplicated, undefined);
      const again = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Lead',
        event_id: 'dup-1',
        value: 2,
      });
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), {
        success: true,
        event_id: 'dup-1',
        message: 'Duplicate event_id; the first event was kept',
        deduplicated: true,
      });
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?event_name=Lead`,
      });
      const kept = list.json().events.filter((e: { event_id: string }) => e.event_id === 'dup-1');
      assert.equal(kept.length, 1);
      assert.equal(kept[0].value, 1);
      // The same event_id on another pixel is another event.
      const second = await h.pixel(acme, { name: 'Second', domain: 'two.example.com' });
      const elsewhere = await h.track(acme, {
        pixel_id: second,
        event_name: 'Lead',
        event_id: 'dup-1',
      });
      assert.equal(elsewhere.json().deduplicated, undefined);
    });

    it('stores exactly one event for 50 concurrent requests with one event_id', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          h.track(acme, {
            pixel_id: pixelId,
            event_name: 'AddToCart',
            event_id: 'race-1',
            value: i,
          }),
        ),
      );
      assert.ok(results.every((r) => r.statusCode === 200));
      assert.equal(results.filter((r) => r.json().deduplicated !== true).length, 1);
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?event_name=AddToCart`,
      });
      assert.equal(list.json().total, 1);
    });

    it('warns about near misses of standard names, and only those', async () => {
      const near = await h.track(acme, { pixel_id: pixelId, event_name: 'purchase' });
      assert.deepEqual(near.json().warnings, [
        'event_name "purchase" is not a standard event; did you mean "Purchase"?',
      ]);
      const snake = await h.track(acme, { pixel_id: pixelId, event_name: 'add_to_cart' });
      assert.deepEqual(snake.json().warnings, [
        'event_name "add_to_cart" is not a standard event; did you mean "AddToCart"?',
      ]);
      for (const name of ['Purchase', 'WishlistShared']) {
        const res = await h.track(acme, { pixel_id: pixelId, event_name: name });
        assert.equal(res.json().warnings, undefined, name);
      }
    });

    it('drops a user_data value it cannot use, keeps the event and says why (§19)', async () => {
      const res = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'drop-1',
        value: 120,
        currency: 'EUR',
        user_data: {
          email: 'jane@example.com',
          phone: '650 555 0199',
          country: 'UK',
          state: '--',
          client_ip_address: '256.1.1.1',
          fbp: 'fb.1.1732473730000.1098115397',
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {
        success: true,
        event_id: 'drop-1',
        message: 'Event tracked',
        warnings: [
          'user_data.phone dropped: must be in E.164 format',
          'user_data.country dropped: must be an ISO 3166-1 alpha-2 code',
          'user_data.state dropped: must not be empty',
          'user_data.client_ip_address dropped: must be an IPv4 or IPv6 address',
        ],
      });
      const stored = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events/drop-1`,
      });
      assert.equal(stored.statusCode, 200, stored.body);
      const record = stored.json();
      assert.equal(record.value, 120);
      assert.deepEqual(record.dropped, [
        'user_data.phone',
        'user_data.country',
        'user_data.state',
        'user_data.client_ip_address',
      ]);
      // Stored without them: only what could be used is in the record.
      assert.deepEqual(Object.keys(record.user_data).sort(), ['email', 'fbp']);
      // Too long, NUL, empty: dropped too; the others are kept.
      const more = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Lead',
        event_id: 'drop-2',
        user_data: { email: `${'x'.repeat(260)}@b.co`, zip: 'a\u0000', city: 'Lyon', phone: '' },
      });
      assert.equal(more.statusCode, 200, more.body);
      assert.deepEqual(more.json().warnings, [
        'user_data.email dropped: must be at most 256 characters',
        'user_data.zip dropped: must not contain NUL (\\u0000) characters',
        'user_data.phone dropped: must be in E.164 format',
      ]);
      // A clean event has no `dropped` entries and no warnings.
      const clean = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Lead',
        event_id: 'drop-3',
        user_data: { phone: '+1 650 555 0199', country: 'GB' },
      });
      assert.equal(clean.json().warnings, undefined);
      const cleanRecord = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events/drop-3`,
      });
      assert.deepEqual(cleanRecord.json().dropped, []);
      // The metric counts each dropped value by field.
      const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /trackway_user_data_dropped_total\{field="phone"\} 2\b/);
      assert.match(metrics, /trackway_user_data_dropped_total\{field="country"\} 1\b/);
      assert.match(metrics, /trackway_user_data_dropped_total\{field="client_ip_address"\} 1\b/);
      assert.match(metrics, /trackway_user_data_dropped_total\{field="first_name"\} 0\b/);
    });

    it('hashes user_data before storing it, with Meta normalisation', async () => {
      await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'CompleteRegistration',
        event_id: 'pii-1',
        user_data: {
          email: '  John_Smith@gmail.com ',
          phone: '+1 (650) 555-1212',
          first_name: 'Valéry',
          city: 'New York',
          country: 'US',
          zip: '94035-1234',
          external_id: sha256('already-hashed'),
        },
      });
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?event_name=CompleteRegistration`,
      });
      const [event] = list.json().events;
      assert.deepEqual(event.user_data, {
        email: '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f',
        phone: sha256('16505551212'),
        first_name: sha256('valéry'),
        city: sha256('newyork'),
        country: sha256('us'),
        zip: sha256('94035'),
        external_id: sha256('already-hashed'),
      });
    });

    describe('authentication', () => {
      const body = () => ({ pixel_id: pixelId, event_name: 'Lead' });
      const unauthorized = { error: 'Unauthorized', message: 'Invalid API key' };

      it('is 401 for a missing key, saying it is missing (issue 30)', async () => {
        for (const headers of [{}, { authorization: '' }, { authorization: '   ' }]) {
          const res = await h.app.inject({
            method: 'POST',
            url: '/v1/track',
            headers,
            payload: body(),
          });
          assert.equal(res.statusCode, 401, JSON.stringify(headers));
          assert.deepEqual(res.json(), {
            error: 'Unauthorized',
            message: 'Missing API key: send the header Authorization: Bearer <API_KEY>',
          });
        }
      });

      it('is 401 for a malformed, unknown or revoked key', async () => {
        const cases: Array<Record<string, string>> = [
          { authorization: 'Basic dXNlcjpwYXNz' },
          { authorization: 'Bearer' },
          {
            authorization: `Bearer ${acme.apiKey.slice(0, -1)}${acme.apiKey.endsWith('x') ? 'y' : 'x'}`,
          },
          { authorization: 'Bearer tw_live_000000000000000000000000000000000000000000000000000' },
        ];
        for (const headers of cases) {
          const res = await h.app.inject({
            method: 'POST',
            url: '/v1/track',
            headers,
            payload: body(),
          });
          assert.equal(res.statusCode, 401, JSON.stringify(headers));
          assert.deepEqual(res.json(), unauthorized);
        }
        const spare = await h.account('pro');
        await revokeKey(
          { store: h.store, clock: h.clock },
          (await h.store.accounts.listApiKeys(spare.account.id))[0]!.id,
        );
        const revoked = await h.request(spare, { method: 'GET', url: '/v1/pixels' });
        assert.equal(revoked.statusCode, 401);
        assert.deepEqual(revoked.json(), unauthorized);
      });

      it('honours a revoked key and a lapsed subscription within one second', async () => {
        // Key lookups are cached for up to 1 s; the test clock stands for the passing second.
        const owner = await h.account('pro');
        const list = () => h.request(owner, { method: 'GET', url: '/v1/pixels' });
        assert.equal((await list()).statusCode, 200);
        await setPlan({ store: h.store, clock: h.clock }, owner.account.id, {
          status: 'canceled',
        });
        h.clock.set(new Date(h.clock.current.getTime() + 1_000));
        const canceled = await list();
        assert.equal(canceled.statusCode, 403);
        assert.match(canceled.json().message, /subscription is canceled/);
        await setPlan({ store: h.store, clock: h.clock }, owner.account.id, { status: 'active' });
        h.clock.set(new Date(h.clock.current.getTime() + 1_000));
        assert.equal((await list()).statusCode, 200);
        await revokeKey(
          { store: h.store, clock: h.clock },
          (await h.store.accounts.listApiKeys(owner.account.id))[0]!.id,
        );
        h.clock.set(new Date(h.clock.current.getTime() + 1_000));
        assert.equal((await list()).statusCode, 401);
      });

      it('checks the key before reading the body', async () => {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/track',
          headers: { 'content-type': 'text/plain' },
          payload: 'x'.repeat(40_000),
        });
        assert.equal(res.statusCode, 401);
      });

      it('is 403 for the starter plan and for inactive subscriptions', async () => {
        const starter = await h.account('starter');
        const res = await h.request(starter, { method: 'GET', url: '/v1/pixels' });
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), {
          error: 'Forbidden',
          message: 'Subscription limit exceeded: plan starter has no API access',
        });
        const lapsed = await h.account('ultra');
        await setPlan({ store: h.store, clock: h.clock }, lapsed.account.id, {
          status: 'past_due',
        });
        const late = await h.request(lapsed, { method: 'GET', url: '/v1/pixels' });
        assert.equal(late.statusCode, 403);
        assert.deepEqual(late.json(), {
          error: 'Forbidden',
          message: 'Subscription limit exceeded: subscription is past_due',
        });
      });
    });
  });
}
