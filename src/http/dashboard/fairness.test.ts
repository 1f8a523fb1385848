/**
 * The dashboard under what an outside tester threw at it (contract §21), on each store: an
 * overview of a pixel with 60,000 distinct event names stays a small page (the 20 busiest names
 * and "other"), a pixel beyond the picker's first 100 is the one shown and posted to, and a
 * body the dashboard cannot read is a 415 / 400 / 413, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  bareEvent,
  type Harness,
  startHarness,
  type TestAccount,
  testStores,
} from '../../../test/harness.ts';
import { newId, newPublishableKey } from '../../domain/ids.ts';
import type { Pixel } from '../../domain/model.ts';

const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const NAMES = 60_000;
const HOUR = 3_600_000;

for (const kind of await testStores()) {
  describe(`dashboard fairness [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let cookie: string;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('enterprise');
      const res = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { ...FORM, ...SAME_ORIGIN },
        payload: new URLSearchParams({ api_key: acme.apiKey }).toString(),
      });
      cookie = String(res.headers['set-cookie']).split(';')[0]!;
    });
    after(() => h.close());

    const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { cookie } });

    it('charts the 20 busiest of 60,000 event names and groups the rest as "other"', async () => {
      const pixel = await h.pixel(acme);
      const at = new Date(h.clock.now().getTime() - HOUR);
      const event = (eventName: string, i: number, value: number | null = null) =>
        bareEvent({
          accountId: acme.account.id,
          pixelId: pixel,
          eventId: `${eventName}-${i}`,
          eventName,
          value,
          timestamp: at,
          receivedAt: at,
        });
      // 25 busy names (busy-00 has 2 events … busy-24 has 26), then 60,000 names seen once.
      const events = [];
      for (let b = 0; b < 25; b++) {
        const name = `busy-${String(b).padStart(2, '0')}`;
        for (let i = 0; i < b + 2; i++) events.push(event(name, i, 1));
      }
      for (let n = 0; n < NAMES; n++) events.push(event(`name-${n}`, 0, 0.5));
      const filling = performance.now();
      for (let i = 0; i < events.length; i += 1_000) {
        await h.store.events.insertEvents(
          events.slice(i, i + 1_000).map((e) => ({ event: e, emit: [] })),
        );
      }
      const filled = performance.now() - filling;

      const started = performance.now();
      const page = await get(`/dashboard?pixel_id=${pixel}`);
      const ms = performance.now() - started;
      assert.equal(page.statusCode, 200);
      const bytes = Buffer.byteLength(page.body);
      console.log(
        `[${kind.name}] overview of ${NAMES.toLocaleString('en-US')} names: ${(bytes / 1024).toFixed(1)} KB, ${ms.toFixed(0)} ms (fill ${(filled / 1000).toFixed(1)} s)`,
      );
      // Was 33.6 MB: every name a series of 24 hours, and a row of the totals table.
      assert.ok(bytes < 100_000, `the page is ${bytes} bytes`);
      const data = JSON.parse(
        /<script type="application\/json" id="overview-data">([^<]*)<\/script>/.exec(
          page.body,
        )![1]!,
      ) as {
        events: Array<{ name: string; data: number[] }>;
        revenue: Array<{ currency: string; data: number[] }>;
      };
      assert.equal(data.events.length, 21);
      // Busiest first: busy-24 … busy-05; busy-04 and below fold into "other" with the rest.
      assert.deepEqual(
        data.events.slice(0, 20).map((s) => s.name),
        Array.from({ length: 20 }, (_, i) => `busy-${String(24 - i).padStart(2, '0')}`),
      );
      const otherNames = NAMES + 5;
      assert.equal(data.events[20]!.name, `Other (${otherNames.toLocaleString('en-US')} names)`);
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      // busy-00 … busy-04 hold 2+3+4+5+6 events: "other" is them and the 60,000.
      assert.equal(sum(data.events[20]!.data), NAMES + 20);
      // Every event is still counted once, and the revenue is every event's.
      assert.equal(sum(data.events.flatMap((s) => s.data)), events.length);
      // The events carry no currency: one series, for values without one.
      assert.deepEqual(
        data.revenue.map((r) => r.currency),
        [''],
      );
      assert.equal(
        sum(data.revenue[0]!.data),
        events.filter((e) => e.value === 1).length + NAMES * 0.5,
      );
      assert.match(
        page.body,
        /<tr><td data-label="Event">busy-24<\/td><td data-label="Events" class="num">26<\/td><td data-label="Revenue" class="num">26 \(no currency\)<\/td>/,
      );
      assert.ok(
        page.body.includes(
          'Other (60,005 names)</td><td data-label="Events" class="num">60,020</td><td data-label="Revenue" class="num">30,020 (no currency)</td>',
        ),
      );

      // The store's read is bounded by the buckets, not the names: at most 21 rows a bucket.
      const hour = Math.floor(at.getTime() / HOUR);
      const top = await h.store.stats.topEventStats(
        {
          accountId: acme.account.id,
          pixelId: pixel,
          interval: 'hour',
          first: hour - 23,
          last: hour,
        },
        20,
      );
      assert.equal(top.buckets.length, 21);
      assert.equal(top.otherNames, otherNames);
    });

    it('shows the pixel asked for beyond the first 100, and its forms post to it', async () => {
      const owner = await h.account('enterprise');
      const { cookie: theirs } = await (async () => {
        const res = await h.app.inject({
          method: 'POST',
          url: '/dashboard/sign-in',
          headers: { ...FORM, ...SAME_ORIGIN },
          payload: new URLSearchParams({ api_key: owner.apiKey }).toString(),
        });
        return { cookie: String(res.headers['set-cookie']).split(';')[0]! };
      })();
      // 120 pixels, written straight to the store (past any plan's quota), a second apart.
      const pixels: Pixel[] = [];
      for (let i = 0; i < 120; i++) {
        const at = new Date(Date.UTC(2026, 0, 1) + i * 1_000);
        const pixel: Pixel = {
          id: newId('px'),
          accountId: owner.account.id,
          name: `Shop ${i}`,
          domain: `shop${i}.example.com`,
          trackingDomain: `shop${i}.example.com`,
          status: 'active',
          publishableKey: newPublishableKey(),
          previousPublishableKey: null,
          previousKeyExpiresAt: null,
          createdAt: at,
          updatedAt: at,
        };
        assert.equal(await h.store.pixels.createPixel(pixel, null, []), 'created');
        pixels.push(pixel);
      }
      const oldest = pixels[0]!;
      const newest = pixels.at(-1)!;
      const show = (url: string) =>
        h.app.inject({ method: 'GET', url, headers: { cookie: theirs } });
      for (const page of [
        '/dashboard',
        '/dashboard/events',
        '/dashboard/tail',
        '/dashboard/destinations',
      ]) {
        const res = await show(`${page}?pixel_id=${oldest.id}`);
        assert.equal(res.statusCode, 200, `${page}: ${res.body.slice(0, 200)}`);
        assert.match(
          res.body,
          new RegExp(`<option value="${oldest.id}" selected>`),
          `${page} shows the pixel asked for`,
        );
        assert.doesNotMatch(res.body, new RegExp(`<option value="${newest.id}" selected>`));
      }
      const destinations = await show(`/dashboard/destinations?pixel_id=${oldest.id}`);
      assert.ok(
        destinations.body.includes(`action="/dashboard/pixels/${oldest.id}/destinations"`),
        'the destination form posts to the pixel asked for',
      );
      assert.ok(
        !destinations.body.includes(`action="/dashboard/pixels/${newest.id}/destinations"`),
      );
      // The pixels list pages through all of them: the oldest is on the second page.
      const first = await show('/dashboard/pixels');
      assert.ok(first.body.includes('1–100 of 120') && !first.body.includes(oldest.id));
      const second = await show('/dashboard/pixels?offset=100');
      assert.ok(second.body.includes(`href="/dashboard/pixels/${oldest.id}"`));
      assert.ok(second.body.includes('101–120 of 120'));
      // Another account's pixel is not shown, whatever its id: the account's newest is.
      const foreign = await show(`/dashboard?pixel_id=${await h.pixel(acme)}`);
      assert.match(foreign.body, new RegExp(`<option value="${newest.id}" selected>`));
    });

    it('answers 415 / 400 / 413, never 500, to a form body it cannot read', async () => {
      const post = (url: string, headers: Record<string, string>, payload: string) =>
        h.app.inject({
          method: 'POST',
          url,
          headers: { cookie, ...SAME_ORIGIN, ...headers },
          payload,
        });
      const pixel = await h.pixel(acme);
      const cases: Array<[string, Record<string, string>, string, number]> = [
        ['/dashboard/keys', { 'content-type': 'text/plain' }, 'name=x', 415],
        ['/dashboard/keys', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\n', 415],
        ['/dashboard/keys', {}, 'name=x', 415],
        ['/dashboard/keys', { 'content-type': 'application/xml' }, '<a/>', 415],
        ['/dashboard/sign-in', { 'content-type': 'text/plain' }, 'api_key=x', 415],
        [`/dashboard/pixels/${pixel}/destinations`, { 'content-type': 'text/csv' }, 'a,b', 415],
        ['/dashboard/keys', { 'content-type': 'application/json' }, '{', 400],
        ['/dashboard/keys', FORM, `name=${'x'.repeat(40_000)}`, 413],
      ];
      for (const [url, headers, payload, status] of cases) {
        const res = await post(url, headers, payload);
        assert.equal(
          res.statusCode,
          status,
          `${url} ${JSON.stringify(headers)}: ${res.body.slice(0, 300)}`,
        );
        assert.match(String(res.headers['content-type']), /^text\/html/);
      }
      const res = await post('/dashboard/keys', { 'content-type': 'text/plain' }, 'x');
      assert.match(res.body, /Forms are sent as application\/x-www-form-urlencoded/);
    });
  });
}
