/**
 * First-party browser collection end to end, in a real browser (Debian chromium through
 * playwright-core), on each store: a test shop is served on one host name (shop.test) and the
 * service on another (track.shop.test), both mapped to 127.0.0.1 by chromium's
 * --host-resolver-rules. The visitor lands with ?fbclid=…&gclid=…; the snippet sends the
 * PageView (and one per pushState), the first-party cookies are set, `trackway('track', …)`
 * returns the id it stored, `data-require-consent` holds everything (no cookie, no request)
 * until consent; and a server Purchase naming the visitor's `_tw_id` reaches the Meta
 * stand-in with the browser's fbc, fbp, IP and user agent.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { ForwardingWorker } from '../src/delivery/forwarding-worker.ts';
import { createPlatformSender, type PlatformSender } from '../src/delivery/platform-sender.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import { CHROMIUM, type LaunchedBrowser, launchChromium, snippetLoaded } from './browser.ts';
import { type Harness, startHarness, type TestAccount, testStores } from './harness.ts';
import { testLogger } from './log-capture.ts';
import { type MetaServer, startMetaServer } from './platforms/meta-server.ts';
import { baseUrlsFor } from './platforms/stand-ins.ts';

const missing =
  !existsSync(CHROMIUM) && `chromium not found at ${CHROMIUM} (set TRACKWAY_CHROMIUM)`;
if (missing && process.env['CI']) throw new Error(`${missing}; CI requires it`);

/** A visitor's browser, not a headless one (which isbot rightly refuses). */
const UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FBCLID = 'IwAR0browserTest_fbclid-1';
const GCLID = 'Cj0KCQiA-browser_gclid';

const waitUntil = async (check: () => Promise<boolean> | boolean, what: string, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

/** The shop: two pages carrying the snippet, one of them asking for consent first. */
async function startShop(snippetSrc: () => string, key: () => string): Promise<Server> {
  const page = (title: string, attributes: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title>
<script>window.trackway=window.trackway||function(){(trackway.q=trackway.q||[]).push(arguments)}</script>
<script async src="${snippetSrc()}" data-key="${key()}" ${attributes}></script>
</head><body><h1>${title}</h1></body></html>`;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const html =
      path === '/consent'
        ? page('Consent first', 'data-require-consent="true"')
        : page('Test shop', '');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

let chromium: LaunchedBrowser | undefined;
before(async () => {
  if (!missing) {
    chromium = await launchChromium([
      '--host-resolver-rules=MAP shop.test 127.0.0.1, MAP track.shop.test 127.0.0.1',
    ]);
  }
});
after(async () => {
  await chromium?.close();
});

for (const kind of await testStores()) {
  describe(`browser collection in chromium [${kind.name}]`, { skip: missing }, () => {
    let h: Harness;
    let meta: MetaServer;
    let sender: PlatformSender;
    let worker: ForwardingWorker;
    let shop: Server;
    let acme: TestAccount;
    let pixelId = '';
    let key = '';
    let service = '';
    let shopUrl = '';
    let context: BrowserContext;

    before(async () => {
      meta = await startMetaServer();
      h = await startHarness(kind, {
        platformUrls: baseUrlsFor({ meta: meta.url }, meta.origin),
      });
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const servicePort = (h.app.server.address() as AddressInfo).port;
      service = `http://track.shop.test:${servicePort}`;
      acme = await h.account('pro');
      pixelId = await h.pixel(acme, {
        name: 'Test shop',
        domain: 'shop.test',
        tracking_domain: 'track.shop.test',
      });
      key = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}` })).json()
        .publishable_key;
      const destination = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixelId}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        },
      });
      assert.equal(destination.statusCode, 201, destination.body);
      sender = createPlatformSender({ timeoutMs: 5_000 });
      worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: [0.05],
        baseUrls: baseUrlsFor({ meta: meta.url }, meta.origin),
        pollMs: 50,
      });
      worker.start();
      shop = await startShop(
        () => `${service}/v1/pixel.js`,
        () => key,
      );
      shopUrl = `http://shop.test:${(shop.address() as AddressInfo).port}`;
      context = await chromium!.browser.newContext({ userAgent: UA });
    });
    after(async () => {
      await context?.close();
      await worker?.stop();
      await sender?.close();
      shop?.close();
      await h?.close();
      await meta?.close();
    });

    const browserEvents = async () => {
      const res = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events?limit=100`,
      });
      return (res.json().events as Array<Record<string, unknown>>).filter(
        (e) => e['source'] === 'browser',
      );
    };

    it('lands with click ids: PageView, cookies, track() ids, pushState, and a stitched server Purchase at Meta', async () => {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${shopUrl}/?fbclid=${FBCLID}&gclid=${GCLID}`);

      // The PageView, stored from the browser, with the landing URL.
      await waitUntil(
        async () => (await browserEvents()).some((e) => e['event_name'] === 'PageView'),
        'the PageView',
      );
      const [pageView] = await browserEvents();
      assert.equal(pageView?.['url'], `${shopUrl}/?fbclid=${FBCLID}&gclid=${GCLID}`);
      assert.equal(pageView?.['title'], 'Test shop');

      // First-party cookies on the shop's registrable domain.
      const cookies = Object.fromEntries((await context.cookies(shopUrl)).map((c) => [c.name, c]));
      const twId = cookies['_tw_id']?.value ?? '';
      assert.match(twId, /^tw\.\d+\.[0-9a-z]+$/);
      assert.match(cookies['_fbp']?.value ?? '', /^fb\.1\.\d+\.\d+$/);
      assert.match(cookies['_fbc']?.value ?? '', new RegExp(`^fb\\.1\\.\\d+\\.${FBCLID}$`));
      assert.equal(cookies['_tw_gclid']?.value, GCLID);
      assert.equal(cookies['_tw_fbclid']?.value, FBCLID);
      for (const name of ['_tw_id', '_fbp', '_fbc']) {
        assert.equal(cookies[name]?.domain.replace(/^\./, ''), 'shop.test', name);
        assert.equal(cookies[name]?.httpOnly, false, name);
      }
      // The service sees the same visitor, by the same cookies, from its own host name.
      assert.deepEqual(
        (await context.cookies(service)).find((c) => c.name === '_tw_id')?.value,
        twId,
      );

      // trackway('track', …) returns the id it sent, for the site's own tags' dedup.
      const eventId = (await page.evaluate(
        "trackway('track', 'AddToCart', { value: 12.5, currency: 'EUR', custom_data: { sku: 'A-1' } })",
      )) as string;
      assert.match(eventId, /^[0-9a-f-]{36}$/);
      await waitUntil(
        async () => (await browserEvents()).some((e) => e['event_id'] === eventId),
        'the AddToCart',
      );
      const added = (await browserEvents()).find((e) => e['event_id'] === eventId);
      assert.equal(added?.['value'], 12.5);
      assert.equal(added?.['currency'], 'EUR');
      assert.deepEqual(added?.['custom_data'], { sku: 'A-1' });

      // A single-page app's navigation is a PageView too.
      await page.evaluate("history.pushState({}, '', '/products/2')");
      await waitUntil(
        async () => (await browserEvents()).some((e) => e['url'] === `${shopUrl}/products/2`),
        'the pushState PageView',
      );

      // The shop's backend read _tw_id and sends the Purchase with it, over HTTP.
      const purchase = await fetch(`${service.replace('track.shop.test', '127.0.0.1')}/v1/track`, {
        method: 'POST',
        headers: { ...acme.headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          pixel_id: pixelId,
          event_name: 'Purchase',
          event_id: `order-${kind.name}`,
          value: 49.99,
          currency: 'EUR',
          url: `${shopUrl}/checkout/thank-you`,
          anonymous_id: twId,
          user_data: { email: 'jane@example.com' },
        }),
      });
      assert.equal(purchase.status, 200, await purchase.text());
      await waitUntil(
        () => meta.events.some((e) => e['event_name'] === 'Purchase'),
        'the Purchase at Meta',
      );
      const atMeta = meta.events.find((e) => e['event_name'] === 'Purchase') as {
        user_data: Record<string, unknown>;
      };
      assert.equal(atMeta.user_data['fbc'], cookies['_fbc']?.value);
      assert.equal(atMeta.user_data['fbp'], cookies['_fbp']?.value);
      assert.equal(atMeta.user_data['client_ip_address'], '127.0.0.1');
      assert.equal(atMeta.user_data['client_user_agent'], UA);
      const record = (
        await h.request(acme, {
          method: 'GET',
          url: `/v1/pixels/${pixelId}/events/order-${kind.name}`,
        })
      ).json();
      assert.equal(record.source, 'server');
      assert.deepEqual(
        [...record.match_quality.enriched].sort(),
        // The landing URL's gclid too (contract §18), for a Google Ads destination.
        ['client_ip_address', 'client_user_agent', 'fbc', 'fbp', 'gclid'].sort(),
      );
      // Browser events went the same way: the PageView reached Meta too.
      await waitUntil(
        () => meta.events.some((e) => e['event_name'] === 'PageView'),
        'the PageView at Meta',
      );
      assert.deepEqual(errors, [], 'the snippet threw nothing into the page');
      await page.close();
    });

    it('with data-require-consent: no cookie, no request until ad_user_data is granted', async () => {
      const fresh = await chromium!.browser.newContext({ userAgent: UA });
      try {
        const page = await fresh.newPage();
        const sent: string[] = [];
        page.on('request', (request) => {
          if (request.url().endsWith('/v1/collect')) sent.push(request.url());
        });
        await page.goto(`${shopUrl}/consent?fbclid=${FBCLID}-2`);
        await snippetLoaded(page);
        const leadId = (await page.evaluate("trackway('track', 'Lead')")) as string;
        assert.match(leadId, /^[0-9a-f-]{36}$/);
        assert.deepEqual(sent, [], 'nothing sent before consent');
        assert.deepEqual(await fresh.cookies(shopUrl), [], 'no cookie before consent');
        assert.ok(!(await browserEvents()).some((e) => e['event_id'] === leadId));

        await page.evaluate("trackway('consent', { ad_user_data: 'granted' })");
        await waitUntil(
          async () => (await browserEvents()).some((e) => e['event_id'] === leadId),
          'the Lead after consent',
        );
        await waitUntil(
          async () =>
            (await browserEvents()).some(
              (e) => e['event_name'] === 'PageView' && String(e['url']).includes('/consent'),
            ),
          'the waiting PageView after consent',
        );
        const names = (await fresh.cookies(shopUrl)).map((c) => c.name);
        for (const name of ['_tw_id', '_fbp', '_fbc']) assert.ok(names.includes(name), name);
      } finally {
        await fresh.close();
      }
    });
  });
}
