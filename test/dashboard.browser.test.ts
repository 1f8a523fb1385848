/**
 * The dashboard in a real browser (Debian chromium through playwright-core) against the real
 * `trackway serve` process, on each store: sign in, create a pixel, see an event tracked over
 * curl arrive in the live tail, open its record (match quality), create a destination pointing
 * at the local Meta server and send it a test, edit it, replay to it (suspended by Meta, then
 * resumed, the event record showing `forwarded`), replace its credentials, delete it, create
 * and revoke a key, resend a failed webhook delivery, sign out. axe-core checks every page: no serious or critical violations.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import {
  CHROMIUM,
  chartsDrawn,
  type LaunchedBrowser,
  launchChromium,
  seriousViolations,
} from './browser.ts';
import { dropSchema, freshSchemaName, postgresAvailable, postgresUrl, tempDir } from './harness.ts';
import { type MetaServer, startMetaServer } from './platforms/meta-server.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

const run = promisify(execFile);

/** A webhook receiver that always answers 500, and tells each request it receives. */
async function failingReceiver(): Promise<{
  url: string;
  server: Server;
  received: () => Promise<void>;
}> {
  const waiters: (() => void)[] = [];
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.writeHead(500, { 'content-type': 'text/plain' }).end('receiver is down');
      for (const wake of waiters.splice(0)) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    server,
    /** Resolves once one more request than already seen has arrived. */
    received() {
      const target = count + 1;
      return new Promise((resolve) => {
        const check = () => (count >= target ? resolve() : waiters.push(check));
        check();
      });
    },
  };
}

/** curl, as a person would run it: the status code and body it got. */
async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run('curl', [
    '-sS',
    '--max-time',
    '10',
    '-w',
    '\\n%{http_code}',
    ...args,
  ]);
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

interface Kind {
  name: string;
  env(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

const kinds: Kind[] = [
  {
    name: 'sqlite',
    async env() {
      const dir = tempDir('trackway-dashboard-');
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
      return {
        env: { DATABASE_URL: postgresUrl(schema) },
        cleanup: () => dropSchema(schema),
      };
    },
  });
}

/** Without chromium the suite is skipped with the reason on a laptop; under CI it fails. */
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

for (const kind of kinds) {
  describe(`dashboard in a browser [${kind.name}]`, { skip: missing }, () => {
    let server: ServerProcess;
    let cleanup: () => Promise<void>;
    let apiKey: string;
    let context: BrowserContext;
    let page: Page;
    let meta: MetaServer;
    const problems: string[] = [];

    before(async () => {
      const setup = await kind.env();
      cleanup = setup.cleanup;
      meta = await startMetaServer();
      const env = {
        ...setup.env,
        TRACKWAY_META_API_URL: meta.url,
        TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
        // One automatic attempt within the test; the rest is the resend button's.
        TRACKWAY_WEBHOOK_RETRY_SCHEDULE: '3600',
      };
      await runCli(['migrate'], env);
      const created = await runCli(
        ['accounts', 'create', '--name', 'Acme', '--plan', 'pro', '--json'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      apiKey = JSON.parse(created.stdout).api_key;
      server = await startServerProcess(env);
      context = await chromium!.browser.newContext({ viewport: { width: 1280, height: 800 } });
      page = await context.newPage();
      // Any script error or CSP refusal on any page fails the suite at the end.
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        // The wrong key's sign-in answers 401 on purpose; anything else is a problem.
        const expected401 =
          message.text().includes('status of 401') &&
          message.location().url.endsWith('/dashboard/sign-in');
        if (message.type() === 'error' && !expected401) {
          problems.push(`console: ${message.text()} (${message.location().url})`);
        }
      });
    });
    after(async () => {
      await context?.close();
      await server?.stop();
      await meta?.close();
      await cleanup?.();
    });

    const url = (path: string) => `${server.url}${path}`;
    const accessible = async (what: string) => {
      const violations = await seriousViolations(page);
      assert.deepEqual(
        violations.map(
          (v) => `${v.id}: ${v.help} (${JSON.stringify(v.nodes.map((n) => n.target))})`,
        ),
        [],
        `${what}: serious or critical accessibility violations`,
      );
    };

    it('walks through every page as a customer would', async () => {
      // Signed out, the dashboard sends the browser to the sign-in page.
      await page.goto(url('/dashboard'));
      assert.match(page.url(), /\/dashboard\/sign-in$/);
      await accessible('sign-in');
      await page.getByLabel('API key').fill('tw_live_wrong');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Invalid API key' }).waitFor();
      await page.getByLabel('API key').fill(apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      // The key is nowhere the page or its scripts can reach.
      assert.ok(!(await page.content()).includes(apiKey));
      assert.equal(
        await page.evaluate('document.cookie + localStorage.length + sessionStorage.length'),
        '00',
      );
      const cookie = (await context.cookies()).find((c) => c.name === 'tw_session');
      assert.equal(cookie?.httpOnly, true);
      assert.equal(cookie?.sameSite, 'Strict');
      await accessible('overview without pixels');

      // Pixels: create one.
      await page.getByRole('link', { name: 'Pixels' }).click();
      await page.getByLabel('Name').fill('Main shop');
      await page.getByLabel('Domain', { exact: true }).fill('shop.example.com');
      await page.getByRole('button', { name: 'Create pixel' }).click();
      await page.getByRole('status').filter({ hasText: 'Pixel created.' }).waitFor();
      const pixelId = (await page.locator('td code').first().textContent())!;
      assert.match(pixelId, /^px_/);
      await accessible('pixels');
      await page.getByRole('link', { name: 'Main shop' }).click();
      await accessible('pixel edit');

      // Live tail: an event tracked over HTTP appears within 2 s, with its hashed record.
      await page.goto(url(`/dashboard/tail?pixel_id=${pixelId}`));
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      // Tracked with curl: a real HTTP request from outside the browser and this process.
      const tracked = await curl([
        '-X',
        'POST',
        url('/v1/track'),
        '-H',
        `authorization: Bearer ${apiKey}`,
        '-H',
        'content-type: application/json',
        '--data',
        JSON.stringify({
          pixel_id: pixelId,
          event_name: 'Purchase',
          event_id: 'order-1001',
          value: 42.5,
          currency: 'EUR',
          // A website event Meta accepts (its page and browser), so it can be forwarded below.
          url: 'https://shop.example.com/checkout',
          user_data: { email: 'Jane@Example.com', client_user_agent: 'Mozilla/5.0 (X11; Linux)' },
        }),
      ]);
      assert.equal(tracked.status, 200, tracked.body);
      const row = page.locator('tr[data-event-id="order-1001"]');
      await row.waitFor({ timeout: 2_000 });
      await row.getByText('View record').click();
      const record = (await row.locator('pre').textContent())!;
      assert.match(record, /"email": "[0-9a-f]{64}"/);
      assert.ok(!record.includes('Jane@Example.com'), 'raw PII never reaches the page');
      await accessible('live tail');

      // Events explorer: filter, then the event's record.
      await page.getByRole('link', { name: 'Events' }).click();
      await page.getByLabel('Event name').fill('Purchase');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.getByText('1 matching events').waitFor();
      await page.getByText('View record of order-1001').click();
      assert.match((await page.locator('pre.record').first().textContent())!, /"value": 42.5/);
      await accessible('events explorer');
      await page.getByRole('link', { name: 'Purchase order-1001' }).click();
      await page.getByRole('heading', { name: 'Match quality' }).waitFor();
      assert.match((await page.locator('dd.score').textContent())!, /^\d+\.\d \/ 10$/);
      await accessible('event record');

      // Destinations: one pointing at the local Meta server, and a test send's answer.
      await page.getByRole('link', { name: 'Destinations' }).click();
      await page.getByText('No destinations yet').waitFor();
      await accessible('destinations without any');
      await page.locator('#meta-name').fill('Meta CAPI');
      await page.getByLabel('Meta pixel ID').fill(meta.pixelId);
      await page.locator('#meta-access_token').fill(meta.accessToken);
      assert.equal(await page.locator('#meta-access_token').getAttribute('type'), 'password');
      await page.getByRole('button', { name: 'Add Meta (Conversions API) destination' }).click();
      await page.getByRole('status').filter({ hasText: 'Destination added.' }).waitFor();
      assert.ok(!(await page.content()).includes(meta.accessToken), 'the secret is masked');
      await page
        .getByRole('row', { name: /Meta CAPI/ })
        .getByText('active')
        .waitFor();
      await accessible('destinations');
      await page.getByRole('button', { name: 'Send test to Meta CAPI' }).click();
      await page.getByRole('heading', { name: 'Test send: accepted' }).waitFor();
      assert.equal(await page.locator('dd.status-code').textContent(), '200');
      assert.match((await page.locator('pre.platform-response').textContent())!, /events_received/);
      assert.ok(
        meta.requests.some((r) => r.url.includes(meta.pixelId)),
        'the local Meta server received the test',
      );
      await accessible('destination test answer');

      // Its own page: forward only purchases.
      await page.getByRole('link', { name: 'Edit Meta CAPI' }).click();
      await page.getByRole('heading', { name: 'Edit destination', level: 1 }).waitFor();
      await accessible('destination edit');
      await page.getByLabel(/Events to forward/).fill('Purchase');
      await page.getByRole('button', { name: 'Save destination' }).click();
      await page.getByRole('status').filter({ hasText: 'Destination saved.' }).waitFor();
      assert.equal(await page.getByLabel(/Events to forward/).inputValue(), 'Purchase');

      // Replay: the event stored before the destination existed is sent now. Meta refuses
      // the token (it expired there), so the worker suspends the destination.
      meta.mode = 'expired';
      await page.getByRole('link', { name: /All destinations/ }).click();
      await page.getByText('Replay to Meta CAPI').click();
      await page.getByRole('button', { name: 'Replay', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Replay: 1 event queued.' }).waitFor();
      const metaRow = () => page.getByRole('row', { name: /Meta CAPI/ });
      while (!(await metaRow().getByText('suspended').isVisible())) await page.reload();
      assert.match((await metaRow().textContent())!, /Session has expired/);
      await accessible('destination suspended');
      await page.getByRole('link', { name: 'Edit Meta CAPI' }).click();
      await page.getByRole('heading', { name: 'Suspended' }).waitFor();
      await accessible('destination edit, suspended');
      await page.getByRole('link', { name: /All destinations/ }).click();

      // Fixed on Meta's side: resume, and the waiting event is forwarded. Its record shows
      // the ledger: the refused request, then Meta's acceptance.
      meta.mode = 'normal';
      await page.getByRole('button', { name: 'Resume Meta CAPI' }).click();
      await page.getByRole('status').filter({ hasText: 'Destination resumed' }).waitFor();
      await page.goto(url(`/dashboard/events/${pixelId}/order-1001`));
      const forwarded = page.locator('.forwarding dd .status.forwarded');
      while (!(await forwarded.isVisible())) await page.reload();
      assert.equal(await forwarded.textContent(), 'forwarded');
      // Each request: [time, status code, duration, Meta's answer].
      const attempts = await page
        .locator('table.attempts tbody tr')
        .evaluateAll((rows) =>
          rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent ?? '')),
        );
      assert.ok(
        attempts.some(([, code, , answer]) => code === '400' && answer?.includes('190')),
        `the refusal is in the ledger: ${JSON.stringify(attempts)}`,
      );
      assert.ok(
        attempts.some(
          ([, code, , answer]) => code === '200' && answer?.includes('events_received'),
        ),
        `the acceptance is in the ledger: ${JSON.stringify(attempts)}`,
      );
      assert.ok(
        meta.events.some((e) => e['event_id'] === 'order-1001'),
        'Meta kept it',
      );
      await accessible('event record, forwarded');

      // New credentials (Meta issued a new token): write-only, shown masked, then used.
      meta.accessToken = 'EAAB-rotated-token-4242';
      await page.getByRole('link', { name: 'Destinations' }).click();
      await page.getByRole('link', { name: 'Edit Meta CAPI' }).click();
      await page.getByLabel(/New access token/).fill(meta.accessToken);
      assert.equal(await page.getByLabel(/New access token/).getAttribute('type'), 'password');
      await page.getByRole('button', { name: 'Replace credentials' }).click();
      await page.getByRole('status').filter({ hasText: 'Credentials replaced.' }).waitFor();
      assert.equal(await page.getByLabel(/New access token/).inputValue(), '');
      assert.ok((await page.content()).includes('****4242'));
      assert.ok(!(await page.content()).includes(meta.accessToken), 'never echoed');
      await page.getByRole('link', { name: /All destinations/ }).click();
      await page.getByRole('button', { name: 'Send test to Meta CAPI' }).click();
      await page.getByRole('heading', { name: 'Test send: accepted' }).waitFor();

      // Delete, confirmed.
      await page.getByRole('link', { name: 'Edit Meta CAPI' }).click();
      await page.getByLabel(/Yes, delete Meta CAPI/).check();
      await page.getByRole('button', { name: 'Delete destination' }).click();
      await page.getByRole('status').filter({ hasText: 'Destination deleted.' }).waitFor();
      await page.getByText('No destinations yet').waitFor();

      // The overview charts the event (Chart.js drew on both canvases).
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('cell', { name: 'Purchase' }).waitFor();
      await chartsDrawn(page, 2);
      await accessible('overview');

      // API keys: create an ingest key (shown once), then revoke it.
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByLabel('Name').fill('Browser SDK');
      await page.getByLabel(/Ingest/).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const newKey = await page.getByLabel('API key').inputValue();
      assert.match(newKey, /^tw_live_/);
      await accessible('API keys with a new key');
      const ingest = await fetch(url('/v1/pixels'), {
        headers: { authorization: `Bearer ${newKey}` },
      });
      assert.equal(ingest.status, 403, 'an ingest key cannot read');
      await page.goto(url('/dashboard/keys'));
      assert.ok(!(await page.content()).includes(newKey), 'shown only once');
      await page.getByRole('button', { name: 'Revoke Browser SDK' }).click();
      await page.getByRole('status').filter({ hasText: 'Key revoked.' }).waitFor();
      await page
        .getByRole('row', { name: /Browser SDK/ })
        .getByText(/revoked/)
        .waitFor();

      // Webhooks: an endpoint that fails, its attempt, and a resend.
      const receiver = await failingReceiver();
      try {
        await page.getByRole('link', { name: 'Webhooks' }).click();
        await page.getByLabel('URL').fill(receiver.url);
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        assert.match(await page.getByLabel('Signing secret').inputValue(), /^whsec_/);
        await accessible('webhooks');
        await page.getByRole('link', { name: receiver.url }).click();
        const first = receiver.received();
        await page.getByRole('button', { name: 'Send test' }).click();
        await page.getByRole('status').filter({ hasText: 'Test message queued.' }).waitFor();
        await first;
        // The attempt is recorded just after the receiver answers: reload until it shows.
        const resend = page.getByRole('button', { name: /^Resend / }).first();
        while (!(await resend.isVisible())) await page.reload();
        assert.equal(await page.getByRole('cell', { name: 'HTTP 500' }).count(), 1);
        await accessible('webhook endpoint');
        const second = receiver.received();
        await resend.click();
        await page.getByRole('status').filter({ hasText: 'Delivery queued again.' }).waitFor();
        await second;
        while ((await page.getByRole('cell', { name: 'HTTP 500' }).count()) < 2)
          await page.reload();
        await page.getByRole('button', { name: 'Rotate secret' }).click();
        assert.match(await page.getByLabel('Signing secret').inputValue(), /^whsec_/);
      } finally {
        receiver.server.close();
      }

      // Sign out ends the session on the server: the old cookie no longer opens anything.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Trackway' }).waitFor();
      const replayed = await fetch(url('/dashboard'), {
        headers: { cookie: `tw_session=${cookie!.value}` },
        redirect: 'manual',
      });
      assert.equal(replayed.status, 303);
      assert.equal(replayed.headers.get('location'), '/dashboard/sign-in');
      assert.deepEqual(problems, []);
    });

    it('refuses a form posted from another site', async () => {
      const res = await fetch(url('/dashboard/sign-in'), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://evil.example',
          'sec-fetch-site': 'cross-site',
        },
        body: new URLSearchParams({ api_key: apiKey }).toString(),
      });
      assert.equal(res.status, 403);
      assert.equal(res.headers.get('set-cookie'), null);
    });
  });
}
