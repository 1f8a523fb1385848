/**
 * `npm run screenshots`: two PNGs per dashboard page in docs/screenshots/, desktop (1280 px,
 * `<page>.png`) and phone (390 px, `<page>-phone.png`), taken in Debian's chromium against a
 * real server on a throwaway SQLite file seeded with a day of events (purchases in EUR and
 * USD, some without `fbc`, some Meta refuses), a failing webhook endpoint, a second key and a
 * Meta destination (the local Meta stand-in) with an events filter; plus the API reference.
 */
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { meta as metaPlatform } from '../src/domain/forwarding/platforms/meta/index.ts';
import { chartsDrawn, launchChromium } from '../test/browser.ts';
import { tempDir } from '../test/harness.ts';
import { startMetaServer } from '../test/platforms/meta-server.ts';
import { runCli, startServerProcess } from '../test/process.ts';

const OUT = join(import.meta.dirname, '..', 'docs', 'screenshots');
const HOUR = 3_600_000;

const dir = tempDir('trackway-screenshots-');
const meta = await startMetaServer();
const env = {
  TRACKWAY_META_API_URL: meta.url,
  DATABASE_URL: `sqlite:${dir.path}/trackway.db`,
  TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
  TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
  TRACKWAY_WEBHOOK_RETRY_SCHEDULE: '3600',
  LOG_LEVEL: 'warn',
};
await runCli(['migrate'], env);
const created = await runCli(
  ['accounts', 'create', '--name', 'Acme Outdoor', '--plan', 'pro', '--json'],
  env,
);
const apiKey: string = JSON.parse(created.stdout).api_key;
const server = await startServerProcess(env);
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(503).end('maintenance'));
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');

/** Calls the API with the account's key; every answer used here carries an `id`. */
async function api(method: string, path: string, body?: unknown): Promise<{ id: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

const chromium = await launchChromium();
try {
  await api('POST', '/v1/pixels', { name: 'Blog', domain: 'blog.example.com' });
  const pixel = await api('POST', '/v1/pixels', { name: 'Main shop', domain: 'shop.example.com' });
  // A day of traffic with a daily shape: page views, carts, leads and purchases with value.
  const now = Date.now();
  const events = [];
  for (let h = 23; h >= 0; h--) {
    const busy = Math.round(8 + 14 * Math.sin(((24 - h) / 24) * Math.PI));
    for (let i = 0; i < busy; i++) {
      const at = new Date(now - h * HOUR - i * 60_000).toISOString();
      events.push({
        pixel_id: pixel.id,
        event_name: 'PageView',
        event_id: `pv-${h}-${i}`,
        timestamp: at,
      });
      if (i % 3 === 0)
        events.push({
          pixel_id: pixel.id,
          event_name: 'AddToCart',
          event_id: `c-${h}-${i}`,
          timestamp: at,
          value: 20 + i,
          currency: 'USD',
        });
      if (i % 5 === 0)
        events.push({
          pixel_id: pixel.id,
          event_name: 'Purchase',
          event_id: `p-${h}-${i}`,
          timestamp: at,
          value: 35 + 3 * i,
          currency: h % 2 === 0 ? 'EUR' : 'USD',
          url: 'https://shop.example.com/checkout/done',
          user_data: {
            email: `buyer${h}${i}@example.com`,
            ...(h % 4 !== 3 && { client_user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X)' }),
            client_ip_address: '203.0.113.20',
            ...(i % 3 === 0 && { fbc: `fb.1.1700000000000.click${h}${i}` }),
          },
        });
      if (i % 7 === 0)
        events.push({
          pixel_id: pixel.id,
          event_name: 'Lead',
          event_id: `l-${h}-${i}`,
          timestamp: at,
        });
    }
  }
  const destination = await api('POST', `/v1/pixels/${pixel.id}/destinations`, {
    type: metaPlatform.type,
    name: 'Meta CAPI',
    config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
    events: ['Purchase', 'AddToCart'],
  });
  // Meta refuses one purchase in eleven for a reason of its own: the diagnostics show it.
  meta.rejectEvent = (event) =>
    /^p-\d*[05]-/.test(String(event['event_id']))
      ? 'Invalid parameter: custom_data.value must be a number'
      : undefined;
  for (let i = 0; i < events.length; i += 500) {
    await api('POST', '/v1/track/batch', { events: events.slice(i, i + 500) });
  }
  await api('POST', '/v1/keys', { name: 'Browser SDK', scope: 'ingest' });
  const { port } = receiver.address() as AddressInfo;
  const hook = await api('POST', '/v1/webhooks', {
    url: `http://127.0.0.1:${port}/trackway`,
    description: 'Order system',
    events: ['event.tracked', 'pixel.created'],
  });
  await api('POST', `/v1/webhooks/${hook.id}/test`, {});
  // The worker's answers settled: the first purchase's record shows its outcome.
  for (let tries = 0; tries < 150; tries++) {
    const res = await fetch(`${server.url}/v1/pixels/${pixel.id}/events/p-0-0`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const record = (await res.json()) as { forwarding: Array<{ status: string }> };
    if (record.forwarding[0] && record.forwarding[0].status !== 'pending') break;
    await new Promise((r) => setTimeout(r, 200));
  }

  mkdirSync(OUT, { recursive: true });
  let live = 0;
  for (const [width, height, suffix] of [
    [1280, 860, ''],
    [390, 844, '-phone'],
  ] as const) {
    const context = await chromium.browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    const shot = (name: string, fullPage = false) =>
      page.screenshot({ path: join(OUT, `${name}${suffix}.png`), fullPage });

    await page.goto(`${server.url}/dashboard/sign-in`);
    await shot('sign-in');
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await chartsDrawn(page, 2);
    await shot('overview');
    await page.goto(`${server.url}/dashboard/diagnostics?pixel_id=${pixel.id}&period=24h`);
    await shot('diagnostics', true);
    await page.goto(`${server.url}/dashboard/pixels`);
    await shot('pixels');
    await page.goto(`${server.url}/dashboard/pixels/${pixel.id}`);
    await shot('pixel-edit');
    await page.goto(`${server.url}/dashboard/events?pixel_id=${pixel.id}&event_name=Purchase`);
    await page.locator('details summary').first().click();
    await shot('events');
    await page.goto(`${server.url}/dashboard/events?pixel_id=${pixel.id}&status=failed`);
    await shot('events-failed');
    await page.goto(`${server.url}/dashboard/tail?pixel_id=${pixel.id}`);
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    for (const name of ['PageView', 'AddToCart', 'Purchase']) {
      live += 1;
      await api('POST', '/v1/track', {
        pixel_id: pixel.id,
        event_name: name,
        event_id: `live-${live}`,
        ...(name !== 'PageView' && { value: 49.9, currency: 'EUR' }),
      });
      await page.locator(`tr[data-event-id="live-${live}"]`).waitFor();
    }
    await shot('live-tail');
    await page.goto(`${server.url}/dashboard/webhooks`);
    await shot('webhooks');
    await page.goto(`${server.url}/dashboard/webhooks/${hook.id}`);
    while (
      !(await page
        .getByRole('button', { name: /^Resend / })
        .first()
        .isVisible())
    ) {
      await page.reload();
    }
    await shot('webhook-deliveries');
    await page.goto(`${server.url}/dashboard/keys`);
    await shot('keys');
    await page.goto(`${server.url}/dashboard/events/${pixel.id}/p-1-0`);
    await shot('event-record');
    await page.goto(`${server.url}/dashboard/events/${pixel.id}/p-10-0`);
    await shot('event-record-failed', true);
    await page.goto(`${server.url}/dashboard/destinations?pixel_id=${pixel.id}`);
    await page.getByRole('button', { name: 'Send test to Meta CAPI' }).click();
    await page.getByRole('heading', { name: /^Test send/ }).waitFor();
    await shot('destinations');
    await page.goto(`${server.url}/dashboard/pixels/${pixel.id}/destinations/${destination.id}`);
    await shot('destination-edit');
    await page.goto(`${server.url}/dashboard/no-such-page`);
    await shot('not-found');
    await page.goto(`${server.url}/docs`);
    await page.locator('#operation\\/trackEvent').waitFor();
    await shot('api-reference');
    await context.close();
  }
  process.stdout.write(`screenshots written to ${OUT}\n`);
} finally {
  await chromium.close();
  receiver.close();
  await server.stop();
  await meta.close();
  dir.remove();
}
