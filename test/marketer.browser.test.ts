/**
 * Issue 34's "marketer's morning" in a real browser (Debian chromium, playwright-core) against
 * the real `trackway serve` process, on each store, at 1280 px and at 390 px: open the
 * diagnostics, read the sentence about missing `fbc` on a seeded pixel, follow it to an example
 * event, see its per-destination badge by name, filter the failed events, send one again, see
 * revenue in EUR and USD apart. Every page is checked with axe-core (no serious or critical
 * violations) and, at 390 px, for horizontal scrolling; the API reference too.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
  CHROMIUM,
  chartsDrawn,
  docsPickersNamed,
  type LaunchedBrowser,
  launchChromium,
  seriousViolations,
} from './browser.ts';
import { dropSchema, freshSchemaName, postgresAvailable, postgresUrl, tempDir } from './harness.ts';
import { type MetaServer, startMetaServer } from './platforms/meta-server.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

interface Kind {
  name: string;
  env(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

const kinds: Kind[] = [
  {
    name: 'sqlite',
    async env() {
      const dir = tempDir('trackway-marketer-');
      return {
        env: { DATABASE_URL: `sqlite:${dir.path}/trackway.db` },
        cleanup: async () => dir.remove(),
      };
    },
  },
];
if (await postgresAvailable()) {
  kinds.push({
    name: 'postgres',
    async env() {
      const schema = freshSchemaName();
      return { env: { DATABASE_URL: postgresUrl(schema) }, cleanup: () => dropSchema(schema) };
    },
  });
}

const missing =
  !existsSync(CHROMIUM) && `chromium not found at ${CHROMIUM} (set TRACKWAY_CHROMIUM)`;
if (missing && process.env['CI']) throw new Error(`${missing}; CI requires it`);

let chromium: LaunchedBrowser | undefined;
before(async () => {
  if (!missing) chromium = await launchChromium();
});
after(async () => {
  await chromium?.close();
});

/** 20 purchases: 12 without `fbc` (60 %), half in EUR and half in USD, two Meta refuses. */
const EVENTS = Array.from({ length: 20 }, (_, i) => ({
  event_id: i < 2 ? `bad-${i + 1}` : `order-${i}`,
  withFbc: i >= 12,
  value: i % 2 === 0 ? 10 : 25,
  currency: i % 2 === 0 ? 'EUR' : 'USD',
}));

for (const kind of kinds) {
  describe(`a marketer's morning in a browser [${kind.name}]`, { skip: missing }, () => {
    let server: ServerProcess;
    let cleanup: () => Promise<void>;
    let apiKey: string;
    let meta: MetaServer;
    let pixelId: string;
    let destinationId: string;

    const url = (path: string) => `${server.url}${path}`;
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(url(path), {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };

    before(async () => {
      const setup = await kind.env();
      cleanup = setup.cleanup;
      meta = await startMetaServer();
      // Meta refuses the `bad-` events for a reason of its own: they end `failed`.
      meta.rejectEvent = (event) =>
        String(event['event_id']).startsWith('bad-')
          ? 'Invalid parameter: custom_data.value must be a number in the currency'
          : undefined;
      const env = { ...setup.env, TRACKWAY_META_API_URL: meta.url };
      await runCli(['migrate'], env);
      const created = await runCli(
        ['accounts', 'create', '--name', 'Acme', '--plan', 'pro', '--json'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      apiKey = JSON.parse(created.stdout).api_key;
      server = await startServerProcess(env);
      pixelId = (await api('POST', '/v1/pixels', { name: 'Shop', domain: 'shop.example.com' }))
        .id as string;
      destinationId = (
        await api('POST', `/v1/pixels/${pixelId}/destinations`, {
          type: 'meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        })
      ).id as string;
      const batch = await api('POST', '/v1/track/batch', {
        events: EVENTS.map((e) => ({
          pixel_id: pixelId,
          event_name: 'Purchase',
          event_id: e.event_id,
          value: e.value,
          currency: e.currency,
          url: 'https://shop.example.com/checkout/done',
          user_data: {
            email: `buyer-${e.event_id}@example.com`,
            client_user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
            client_ip_address: '203.0.113.9',
            ...(e.withFbc && { fbc: `fb.1.1700000000000.click-${e.event_id}` }),
          },
        })),
      });
      assert.equal(batch['rejected'], 0, JSON.stringify(batch));
      // Forwarded by the server's worker: wait until Meta's answers are settled.
      const statusOf = async (eventId: string) =>
        (
          (await api('GET', `/v1/pixels/${pixelId}/events/${eventId}`))['forwarding'] as Array<{
            status: string;
          }>
        )[0]?.status;
      const deadline = Date.now() + 30_000;
      while (
        ((await statusOf('bad-2')) !== 'failed' || (await statusOf('order-19')) !== 'forwarded') &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(await statusOf('bad-2'), 'failed');
    });
    after(async () => {
      await server?.stop();
      await meta?.close();
      await cleanup?.();
    });

    for (const [width, height, failedEvent] of [
      [1280, 800, 'bad-1'],
      [390, 844, 'bad-2'],
    ] as const) {
      it(`walks the morning at ${width} px`, async () => {
        const context = await chromium!.browser.newContext({ viewport: { width, height } });
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        page.on('console', (message) => {
          // The unknown page below answers 404 on purpose.
          const expected404 =
            message.text().includes('status of 404') &&
            message.location().url.endsWith('/dashboard/nowhere');
          if (message.type() === 'error' && !expected404) {
            problems.push(`console: ${message.text()}`);
          }
        });
        const check = async (what: string, p: Page = page) => {
          const violations = await seriousViolations(p);
          assert.deepEqual(
            violations.map(
              (v) => `${v.id}: ${v.help} (${JSON.stringify(v.nodes.map((n) => n.target))})`,
            ),
            [],
            `${what} at ${width} px: serious or critical accessibility violations`,
          );
          const overflow = (await p.evaluate(
            'document.documentElement.scrollWidth - document.documentElement.clientWidth',
          )) as number;
          const wide =
            overflow > 0
              ? await p.evaluate(
                  "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')",
                )
              : '';
          assert.ok(
            overflow <= 0,
            `${what} at ${width} px scrolls sideways by ${overflow} px: ${wide}`,
          );
        };
        try {
          await page.goto(url('/dashboard/sign-in'));
          await check('sign-in');
          await page.getByLabel('API key').fill(apiKey);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();

          // Diagnostics: the worst first, in words.
          await page.getByRole('link', { name: 'Diagnostics' }).click();
          await page.getByRole('heading', { name: 'Diagnostics', level: 1 }).waitFor();
          await page.getByLabel('Period').selectOption('24h');
          await page.getByRole('button', { name: 'Show' }).click();
          const finding = page
            .locator('.findings li')
            .filter({ hasText: '60 % of Purchase events reach Meta without fbc' });
          await finding.waitFor();
          assert.match((await finding.textContent())!, /add the snippet or send fbc/);
          await check('diagnostics');

          // Its example: an event stored without fbc, and Meta's badge by name.
          await finding.getByRole('link', { name: 'See an example event' }).click();
          await page.getByRole('heading', { name: 'Event record', level: 1 }).waitFor();
          const missingKeys = await page
            .locator('dl.match-quality dt:text("Keys missing") + dd')
            .textContent();
          assert.match(missingKeys!, /fbc/);
          await page.locator('article.forwarding h3').filter({ hasText: 'Meta' }).waitFor();
          await check('event record');

          // The explorer, failed events only: each row carries Meta's badge.
          await page.getByRole('link', { name: 'Events', exact: true }).click();
          await page.getByLabel('Forwarding').selectOption('failed');
          await page.getByRole('button', { name: 'Show' }).click();
          const failedRow = page.locator('tr').filter({ hasText: failedEvent });
          await failedRow.waitFor();
          assert.match((await failedRow.textContent())!, /Meta: failed/);
          assert.equal(await page.locator('tr').filter({ hasText: 'order-19' }).count(), 0);
          await check('events explorer, failed');

          // Send one again.
          await failedRow.getByRole('link', { name: `Purchase ${failedEvent}` }).click();
          await page.getByRole('heading', { name: 'Event record', level: 1 }).waitFor();
          assert.match(
            (await page.locator('article.forwarding').textContent())!,
            /Invalid parameter/,
          );
          await page.getByRole('button', { name: 'Send again to Meta' }).click();
          await page.getByRole('status').filter({ hasText: 'Queued to be sent again' }).waitFor();
          await check('event record, sent again');

          // Revenue: EUR and USD apart, never added.
          await page.getByRole('link', { name: 'Overview' }).click();
          await page.getByLabel('Period').selectOption('24h');
          await page.getByRole('button', { name: 'Show' }).click();
          const purchase = page.locator('tr').filter({ hasText: 'Purchase' });
          await purchase.waitFor();
          const revenue = (await purchase.textContent())!;
          assert.ok(revenue.includes('€100.00'), revenue);
          assert.ok(revenue.includes('$250.00'), revenue);
          await chartsDrawn(page, 2);
          await check('overview');

          // An unknown dashboard page: 404 inside the layout, the navigation still there.
          const lost = await page.goto(url('/dashboard/nowhere'));
          assert.equal(lost?.status(), 404);
          await page.getByRole('heading', { name: 'Page not found' }).waitFor();
          await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
          await check('404');

          // Every other page, at this width too.
          for (const [what, path] of [
            ['pixels', '/dashboard/pixels'],
            ['pixel edit', `/dashboard/pixels/${pixelId}`],
            ['live tail', `/dashboard/tail?pixel_id=${pixelId}`],
            ['destinations', `/dashboard/destinations?pixel_id=${pixelId}`],
            ['destination edit', `/dashboard/pixels/${pixelId}/destinations/${destinationId}`],
            ['webhooks', '/dashboard/webhooks'],
            ['API keys', '/dashboard/keys'],
            ['events explorer', `/dashboard/events?pixel_id=${pixelId}`],
          ] as const) {
            await page.goto(url(path));
            await page.getByRole('heading', { level: 1 }).waitFor();
            await check(what);
          }

          // The API reference: Trackway's, readable, served from this server alone.
          const outside: string[] = [];
          page.on('request', (r) => {
            if (!r.url().startsWith(server.url) && !/^(data|blob):/.test(r.url())) {
              outside.push(r.url());
            }
          });
          await page.goto(url('/docs'));
          await page.getByRole('heading', { name: /Trackway API/ }).waitFor();
          await page.locator('#operation\\/trackEvent').waitFor();
          // docs.js names Redoc's pickers once it has drawn.
          await docsPickersNamed(page);
          assert.deepEqual(outside, []);
          await check('API reference');
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      });
    }
  });
}
