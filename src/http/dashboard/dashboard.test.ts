/**
 * The dashboard's server side through app.inject(), on each store: sessions (cookie flags, shared
 * by instances, ended by sign-out and by revoking the key), the same-origin rule on forms,
 * tenant isolation and escaping. The browser suite (test/dashboard.browser.test.ts) covers the
 * pages as a person uses them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type Harness,
  postgresUrl,
  startHarness,
  type TestAccount,
  testStores,
} from '../../../test/harness.ts';
import { testLogger } from '../../../test/log-capture.ts';
import { type MetaServer, startMetaServer } from '../../../test/platforms/meta-server.ts';
import { baseUrlsFor, STAND_INS } from '../../../test/platforms/stand-ins.ts';
import { ForwardingWorker } from '../../delivery/forwarding-worker.ts';
import { createPlatformSender } from '../../delivery/platform-sender.ts';
import {
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
} from '../../domain/forwarding/platforms/registry.ts';
import { systemClock } from '../../domain/ports/clock.ts';
import { PostgresStore } from '../../storage/postgres/store.ts';
import { buildApp } from '../app.ts';

const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

for (const kind of await testStores()) {
  describe(`dashboard [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let meta: MetaServer;

    before(async () => {
      meta = await startMetaServer();
      h = await startHarness(kind, {
        platformUrls: baseUrlsFor({ meta: meta.url }, meta.origin),
      });
      acme = await h.account('pro');
      other = await h.account('pro');
    });
    after(async () => {
      await h.close();
      await meta.close();
    });

    async function signIn(owner: TestAccount, headers: Record<string, string> = SAME_ORIGIN) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { ...FORM, ...headers },
        payload: new URLSearchParams({ api_key: owner.apiKey }).toString(),
      });
      const setCookie = String(res.headers['set-cookie'] ?? '');
      return { res, setCookie, cookie: setCookie.split(';')[0]! };
    }

    /** A stand-in's config as the add form's fields (dotted names; JSON fields as text). */
    const formOf = (type: Platform, config: Record<string, unknown>) => {
      const form: Record<string, string> = {};
      for (const field of PLATFORM_MODULES[type].config.form) {
        const [head, ...rest] = field.name.split('.') as [string, ...string[]];
        const value =
          rest.length === 0
            ? config[head]
            : (config[head] as Record<string, unknown> | undefined)?.[rest.join('.')];
        if (value !== undefined)
          form[field.name] = field.json ? JSON.stringify(value) : String(value);
      }
      return form;
    };
    const get = (cookie: string, url: string) =>
      h.app.inject({ method: 'GET', url, headers: { cookie } });
    const post = (cookie: string, url: string, form: Record<string, string | string[]> = {}) => {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) {
        for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
      }
      return h.app.inject({
        method: 'POST',
        url,
        headers: { ...FORM, ...SAME_ORIGIN, cookie },
        payload: body.toString(),
      });
    };

    it("shows a pixel's browser setup: key, snippet, anonymous_id, last browser hit; rotates the key", async () => {
      const pixelId = await h.pixel(acme, {
        name: 'Setup',
        domain: 'setup.example.com',
        tracking_domain: 'track.setup.example.com',
      });
      const { cookie } = await signIn(acme);
      const page = `/dashboard/pixels/${pixelId}`;
      const key = async () =>
        (await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}` })).json()
          .publishable_key as string;
      const before = (await get(cookie, page)).body;
      const first = await key();
      assert.ok(before.includes(first), 'the publishable key');
      assert.ok(before.includes('https://track.setup.example.com/v1/pixel.js'), 'the snippet');
      assert.ok(before.includes('anonymous_id'), 'the server example');
      assert.match(before, /none in the last 7 days/);
      const hit = await h.app.inject({
        method: 'POST',
        url: '/v1/collect',
        headers: {
          origin: 'https://setup.example.com',
          'user-agent':
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36',
        },
        payload: {
          key: first,
          event_name: 'PageView',
          url: 'https://setup.example.com/',
          anonymous_id: 'tw.1.x',
        },
      });
      assert.equal(hit.statusCode, 200, hit.body);
      const after = (await get(cookie, page)).body;
      assert.doesNotMatch(after, /none in the last 7 days/);
      const events = (await get(cookie, `/dashboard/events?pixel_id=${pixelId}`)).body;
      assert.match(events, /<td data-label="Source">browser<\/td>/);
      const rotated = await post(cookie, `${page}/publishable-key`);
      assert.equal(rotated.statusCode, 303, rotated.body);
      const second = await key();
      assert.notEqual(second, first);
      assert.match((await get(cookie, String(rotated.headers.location))).body, new RegExp(second));
      const theirs = await signIn(other);
      assert.equal((await post(theirs.cookie, `${page}/publishable-key`)).statusCode, 404);
      assert.equal(await key(), second);
    });

    it('warns that a test event code keeps every event out of live conversions', async () => {
      const pixelId = await h.pixel(acme);
      const { cookie } = await signIn(acme);
      const page = `/dashboard/destinations?pixel_id=${pixelId}`;
      // The form says it next to the field, for Meta and for TikTok.
      const empty = await get(cookie, page);
      assert.match(
        empty.body,
        /aria-describedby="meta-test_event_code-warning"><p class="warning field-warning" id="meta-test_event_code-warning">For testing only: while a test event code is set, every event goes to the platform’s Test events tool and none counts as a live conversion/,
      );
      assert.match(empty.body, /id="tiktok-test_event_code-warning"/);
      const create = (config: Record<string, string>) =>
        h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixelId}/destinations`,
          payload: { type: 'meta', config },
        });
      const live = await create({ pixel_id: meta.pixelId, access_token: meta.accessToken });
      assert.equal(live.statusCode, 201, live.body);
      const liveId = live.json().id as string;
      const liveEdit = await get(cookie, `/dashboard/pixels/${pixelId}/destinations/${liveId}`);
      assert.doesNotMatch(liveEdit.body, /Test mode/, 'a live destination has no warning');
      assert.doesNotMatch((await get(cookie, page)).body, /<strong>Test mode<\/strong>/);

      const testing = await create({
        pixel_id: meta.pixelId,
        access_token: meta.accessToken,
        test_event_code: 'TEST4242',
      });
      assert.equal(testing.statusCode, 201, testing.body);
      const testId = testing.json().id as string;
      const warning =
        /<p class="warning" role="note"><strong>Test mode<\/strong> \(test event code <code>TEST4242<\/code>\): every event goes to the platform’s Test events only and none counts as a live conversion/;
      const listed = await get(cookie, page);
      assert.match(listed.body, warning);
      assert.equal(listed.body.match(/<strong>Test mode<\/strong>/g)?.length, 1, 'only that one');
      const edit = await get(cookie, `/dashboard/pixels/${pixelId}/destinations/${testId}`);
      assert.match(edit.body, warning);
    });

    it('renders the add form of every platform of the registry, and each adds a destination from its fields', async () => {
      const pixelId = await h.pixel(acme);
      const { cookie } = await signIn(acme);
      const page = await get(cookie, `/dashboard/destinations?pixel_id=${pixelId}`);
      assert.equal(page.statusCode, 200);
      for (const type of PLATFORMS) {
        const { label, config } = PLATFORM_MODULES[type];
        assert.match(page.body, new RegExp(`<h3 id="new-${type}-h">${escapeRegExp(label)}</h3>`));
        for (const field of config.form) {
          assert.ok(
            page.body.includes(`id="${type}-${field.name}" name="${field.name}"`),
            `${type}.${field.name}`,
          );
        }
        const standIn = await STAND_INS[type]();
        try {
          const added = await post(cookie, `/dashboard/pixels/${pixelId}/destinations`, {
            type,
            name: `My ${type}`,
            ...formOf(type, standIn.config),
          });
          assert.equal(added.statusCode, 303, `${type}: ${added.body.slice(0, 500)}`);
        } finally {
          await standIn.close();
        }
      }
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/destinations`,
      });
      assert.deepEqual(
        list
          .json()
          .destinations.map((d: { type: string }) => d.type)
          .sort(),
        [...PLATFORMS].sort(),
      );
      // A platform without a test mode: the test send is checked and not sent, and says so.
      for (const d of list.json().destinations as Array<{ id: string; type: Platform }>) {
        if (PLATFORM_MODULES[d.type].testMode !== false) continue;
        const tested = await post(cookie, `/dashboard/pixels/${pixelId}/destinations/${d.id}/test`);
        assert.equal(tested.statusCode, 200);
        assert.match(tested.body, /Test send: checked, not sent/);
        assert.match(
          tested.body,
          /has no test mode: the request was built and checked, and not sent/,
        );
      }
    });

    it('adds a destination, masks its secret, sends a test and shows the answer, disables and replays it', async () => {
      const pixelId = await h.pixel(acme);
      const { cookie } = await signIn(acme);
      const empty = await get(cookie, `/dashboard/destinations?pixel_id=${pixelId}`);
      assert.equal(empty.statusCode, 200);
      assert.match(empty.body, /No destinations yet/);
      assert.match(empty.body, /name="access_token" type="password"/);
      assert.match(empty.body, /name="api_secret" type="password"/);

      const create = `/dashboard/pixels/${pixelId}/destinations`;
      const bad = await post(cookie, create, {
        type: 'meta',
        name: 'My Meta',
        pixel_id: 'not-digits',
        access_token: 'x',
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /role="alert">Invalid field: config\.pixel_id must be digits</);
      assert.match(bad.body, /No destinations yet/);

      const ok = await post(cookie, create, {
        type: 'meta',
        name: 'My Meta',
        pixel_id: meta.pixelId,
        access_token: meta.accessToken,
      });
      assert.equal(ok.statusCode, 303, ok.body);
      const [dst] = (
        await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}/destinations` })
      ).json().destinations;
      assert.equal(dst.type, 'meta');
      assert.equal(dst.config.pixel_id, meta.pixelId);
      assert.equal(dst.config.require_consent, undefined);
      assert.match(empty.body, /name="require_consent" value="true"/);
      const strictPixel = await h.pixel(acme);
      const strict = await post(cookie, `/dashboard/pixels/${strictPixel}/destinations`, {
        type: 'ga4',
        measurement_id: 'G-TEST123',
        api_secret: 'secret',
        require_consent: 'true',
      });
      assert.equal(strict.statusCode, 303, strict.body);
      const [strictDst] = (
        await h.request(acme, { method: 'GET', url: `/v1/pixels/${strictPixel}/destinations` })
      ).json().destinations;
      assert.equal(strictDst.config.require_consent, true);
      const listed = await get(cookie, String(ok.headers.location));
      assert.match(listed.body, /Destination added/);
      assert.match(listed.body, /My Meta/);
      assert.match(listed.body, /class="status active">active</);
      assert.ok(!listed.body.includes(meta.accessToken), 'the secret is never shown');
      assert.ok(listed.body.includes(`****${meta.accessToken.slice(-4)}`));

      const base = `/dashboard/pixels/${pixelId}/destinations/${dst.id}`;
      const tested = await post(cookie, `${base}/test`);
      assert.equal(tested.statusCode, 200);
      assert.match(tested.body, /Test send: accepted/);
      assert.match(tested.body, /class="status-code">200</);
      assert.match(tested.body, /events_received/);
      assert.equal(meta.requests.length > 0, true, 'the local Meta server was called');

      const disabled = await post(cookie, `${base}/enabled`, { enabled: 'false' });
      assert.equal(disabled.statusCode, 303);
      const after = await get(cookie, String(disabled.headers.location));
      assert.match(after.body, /class="status paused">disabled</);
      assert.match(after.body, /Enable My Meta/);

      const replayed = await post(cookie, `${base}/replay`, {
        start_date: '2026-01-01',
        end_date: '2026-01-02',
        statuses: ['failed', 'skipped'],
      });
      // A disabled destination is not replayed (contract §21): the form says why.
      assert.equal(replayed.statusCode, 409);
      assert.match(replayed.body, /Destination is disabled/);
      const backwards = await post(cookie, `${base}/replay`, {
        start_date: '2026-01-03',
        end_date: '2026-01-02',
      });
      assert.equal(backwards.statusCode, 400);
      assert.match(backwards.body, /start_date/);

      // Another account's destination: not found, on every form.
      const theirs = await signIn(other);
      for (const action of ['test', 'enabled', 'replay']) {
        const res = await post(theirs.cookie, `${base}/${action}`, {
          enabled: 'true',
          start_date: '2026-01-01',
          end_date: '2026-01-02',
        });
        assert.equal(res.statusCode, 404, action);
        assert.ok(!res.body.includes('My Meta'), action);
      }
    });

    it('edits a destination, replaces its credentials write-only, resumes it and deletes it after confirmation', async () => {
      const pixelId = await h.pixel(acme);
      const created = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixelId}/destinations`,
        payload: {
          type: 'meta',
          name: 'Shop Meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        },
      });
      const id = created.json().id as string;
      const api = async () =>
        (
          await h.request(acme, {
            method: 'GET',
            url: `/v1/pixels/${pixelId}/destinations/${id}`,
          })
        ).json();
      const { cookie } = await signIn(acme);
      const page = `/dashboard/pixels/${pixelId}/destinations/${id}`;

      const list = await get(cookie, `/dashboard/destinations?pixel_id=${pixelId}`);
      assert.ok(list.body.includes(`href="${page}"`), 'the list links to the destination');
      const shown = await get(cookie, page);
      assert.equal(shown.statusCode, 200);
      assert.match(shown.body, /value="Shop Meta"/);
      assert.ok(shown.body.includes(`****${meta.accessToken.slice(-4)}`));
      assert.ok(!shown.body.includes(meta.accessToken), 'the secret is never shown');
      assert.match(shown.body, /name="access_token" type="password" autocomplete="off" required>/);

      // Settings: name, an events filter (repeats dropped), disabled; then every event again.
      const saved = await post(cookie, page, {
        name: 'Renamed Meta',
        events: 'Purchase, Lead\nPurchase',
        enabled: 'false',
      });
      assert.equal(saved.statusCode, 303, saved.body);
      assert.match((await get(cookie, String(saved.headers.location))).body, /Destination saved/);
      let now = await api();
      assert.equal(now.name, 'Renamed Meta');
      assert.deepEqual(now.events, ['Purchase', 'Lead']);
      assert.equal(now.enabled, false);
      assert.equal(
        (await post(cookie, page, { name: '', events: ' ', enabled: 'true' })).statusCode,
        303,
      );
      now = await api();
      assert.equal(now.name, 'Renamed Meta', 'an empty name keeps the name');
      assert.equal(now.events, null);
      assert.equal(now.enabled, true);
      const badName = await post(cookie, page, { name: 'x'.repeat(201) });
      assert.equal(badName.statusCode, 400);
      assert.match(badName.body, /role="alert">Invalid field: name/);

      // Credentials: required, then replaced; the answer redirects and never carries them.
      const credentials = `${page}/credentials`;
      const empty = await post(cookie, credentials, { access_token: ' ' });
      assert.equal(empty.statusCode, 400);
      assert.match(empty.body, /config\.access_token is required/);
      const secret = 'EAAB-replaced-secret-9876';
      const replaced = await post(cookie, credentials, { access_token: secret });
      assert.equal(replaced.statusCode, 303);
      assert.ok(!replaced.body.includes(secret));
      const after = await get(cookie, String(replaced.headers.location));
      assert.match(after.body, /Credentials replaced/);
      assert.ok(after.body.includes('****9876'));
      assert.ok(!after.body.includes(secret), 'never echoed');
      assert.equal((await api()).config.access_token, '****9876');

      // Suspended (as the worker leaves it when the platform refuses the credentials): the
      // page says so; Resume and new credentials each make it active again.
      const suspend = () =>
        h.store.destinations.updateDestination(acme.account.id, pixelId, id, (d) => ({
          ...d,
          state: 'suspended',
          lastError: 'meta 190: Error validating access token',
        }));
      await suspend();
      const suspendedPage = await get(cookie, page);
      assert.match(suspendedPage.body, /id="suspended-h">Suspended</);
      assert.match(suspendedPage.body, /Error validating access token/);
      const suspendedList = await get(cookie, `/dashboard/destinations?pixel_id=${pixelId}`);
      assert.match(suspendedList.body, /class="status suspended">suspended</);
      assert.match(suspendedList.body, /aria-label="Resume Renamed Meta"/);
      const resumed = await post(cookie, `${page}/resume`);
      assert.equal(resumed.statusCode, 303);
      assert.match(
        (await get(cookie, String(resumed.headers.location))).body,
        /Destination resumed/,
      );
      now = await api();
      assert.equal(now.state, 'active');
      assert.equal(now.last_error, null);
      await suspend();
      assert.equal(
        (await post(cookie, credentials, { access_token: meta.accessToken })).statusCode,
        303,
      );
      assert.equal((await api()).state, 'active');

      // Each type asks for its own secrets: GA4's API secret.
      const ga4 = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixelId}/destinations`,
        payload: {
          type: 'ga4',
          config: { measurement_id: 'G-ABC123', api_secret: 'sec-ga4-5555' },
        },
      });
      const ga4Page = await get(
        cookie,
        `/dashboard/pixels/${pixelId}/destinations/${ga4.json().id}`,
      );
      assert.match(ga4Page.body, /New API secret <span class="hint">\(now \*\*\*\*5555\)/);
      assert.match(ga4Page.body, /name="api_secret" type="password"/);
      assert.ok(!ga4Page.body.includes('name="access_token"'));
      assert.ok(!ga4Page.body.includes('sec-ga4-5555'));

      // Another account: not found on the page and every form, and nothing changes.
      const theirs = await signIn(other);
      assert.equal((await get(theirs.cookie, page)).statusCode, 404);
      for (const action of ['', '/credentials', '/resume', '/delete']) {
        const res = await post(theirs.cookie, `${page}${action}`, {
          name: 'Stolen',
          access_token: 'EAAB-stolen-0000',
          confirm: 'yes',
        });
        assert.equal(res.statusCode, 404, action);
        assert.ok(!res.body.includes('Renamed Meta'), action);
      }
      now = await api();
      assert.equal(now.name, 'Renamed Meta');
      assert.equal(now.config.access_token, `****${meta.accessToken.slice(-4)}`);

      // Delete: refused without the confirmation, done with it.
      const unconfirmed = await post(cookie, `${page}/delete`);
      assert.equal(unconfirmed.statusCode, 400);
      assert.match(unconfirmed.body, /Tick the confirmation box/);
      assert.equal((await api()).id, id);
      const deleted = await post(cookie, `${page}/delete`, { confirm: 'yes' });
      assert.equal(deleted.statusCode, 303);
      const gone = await get(cookie, String(deleted.headers.location));
      assert.match(gone.body, /Destination deleted/);
      assert.ok(!gone.body.includes('Renamed Meta'), 'gone from the list');
      assert.ok(gone.body.includes(ga4.json().id), 'the other destination stays');
      const api404 = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/destinations/${id}`,
      });
      assert.equal(api404.statusCode, 404);
      assert.equal((await get(cookie, page)).statusCode, 404);
    });

    it("shows one event's record with its match quality and forwarding ledger", async () => {
      const pixelId = await h.pixel(acme);
      const created = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixelId}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        },
      });
      const dst = created.json().id as string;
      const tracked = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Lead',
        event_id: 'lead-dash',
        timestamp: new Date().toISOString(),
        url: 'https://shop.example/checkout',
        consent: { ad_user_data: 'granted', limited_data_use: true },
        user_data: { email: 'jane@example.com', client_user_agent: 'Mozilla/5.0 (test)' },
      });
      assert.equal(tracked.statusCode, 200, tracked.body);
      const { cookie } = await signIn(acme);
      const list = await get(cookie, `/dashboard/events?pixel_id=${pixelId}`);
      assert.ok(list.body.includes(`/dashboard/events/${pixelId}/lead-dash`));
      const url = `/dashboard/events/${pixelId}/lead-dash`;
      const pending = await get(cookie, url);
      assert.equal(pending.statusCode, 200);
      assert.match(pending.body, /Match quality/);
      assert.match(pending.body, /<h2 id="consent-h">Consent<\/h2>/);
      assert.match(pending.body, /<dt>ad_user_data<\/dt><dd>granted<\/dd>/);
      assert.match(pending.body, /<dt>limited_data_use<\/dt><dd>true<\/dd>/);
      assert.match(pending.body, /class="score">\d+\.\d \/ 10</);
      assert.match(pending.body, /<code>em<\/code>|<code>email<\/code>/);
      assert.ok(pending.body.includes(dst));
      assert.match(pending.body, /class="status pending">pending</);
      assert.doesNotMatch(pending.body, /<dt>Dropped<\/dt>/, 'nothing was dropped');

      // An event stored without a value it could not use says so (contract §19).
      const dropped = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'dropped-dash',
        value: 10,
        currency: 'EUR',
        user_data: { email: 'jane@example.com', phone: '650 555 0199' },
      });
      assert.equal(dropped.statusCode, 200, dropped.body);
      const droppedPage = await get(cookie, `/dashboard/events/${pixelId}/dropped-dash`);
      assert.match(
        droppedPage.body,
        /<dt>Dropped<\/dt><dd class="dropped"><code>user_data\.phone<\/code>/,
      );
      const listed = await get(cookie, `/dashboard/events?pixel_id=${pixelId}`);
      assert.match(listed.body, /class="status dropped"[^>]*>1 dropped</);

      const sender = createPlatformSender({ timeoutMs: 2_000 });
      const worker = new ForwardingWorker({
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
      try {
        const deadline = Date.now() + 10_000;
        let page = await get(cookie, url);
        while (!page.body.includes('class="status forwarded"') && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          page = await get(cookie, url);
        }
        assert.match(page.body, /class="status forwarded">forwarded</);
        assert.match(page.body, /<caption>Requests to Meta \(Conversions API\)<\/caption>/);
        assert.match(
          page.body,
          /<dt>Destination<\/dt><dd><a [^>]+>[^<]+<\/a> <span class="hint">\(Meta \(Conversions API\), <code>dst_/,
        );
        assert.match(page.body, /<td>200<\/td>/);
        assert.match(page.body, /events_received/);
        // The explorer: one badge per destination, by name, and the status filter.
        const list = await get(cookie, `/dashboard/events?pixel_id=${pixelId}`);
        assert.match(list.body, /<span class="status forwarded">Meta: forwarded<\/span>/);
        const failed = await get(cookie, `/dashboard/events?pixel_id=${pixelId}&status=failed`);
        assert.doesNotMatch(failed.body, /lead-dash/);
        const forwarded = `/dashboard/events?pixel_id=${pixelId}&status=forwarded&destination_id=${dst}`;
        assert.match((await get(cookie, forwarded)).body, /lead-dash/);
        // Diagnostics count it for Meta, by name.
        const diagnostics = await get(
          cookie,
          `/dashboard/diagnostics?pixel_id=${pixelId}&period=24h`,
        );
        assert.equal(diagnostics.statusCode, 200);
        assert.match(
          diagnostics.body,
          /<td data-label="Destination">Meta<\/td><td data-label="Forwarded" class="num">1 \(/,
        );
      } finally {
        await worker.stop();
        await sender.close();
      }
      const theirs = await signIn(other);
      assert.equal((await get(theirs.cookie, url)).statusCode, 404);
    });

    it("remembers the last pixel shown, never another account's", async () => {
      const first = await h.pixel(acme, { name: 'First shop', domain: 'first.example.com' });
      await h.pixel(acme, { name: 'Newest shop', domain: 'newest.example.com' });
      const { cookie } = await signIn(acme);
      const shown = await get(cookie, `/dashboard/diagnostics?pixel_id=${first}`);
      const remembered = String(shown.headers['set-cookie'] ?? '');
      assert.match(remembered, new RegExp(`^tw_pixel=${first};.*HttpOnly; SameSite=Strict`));
      const both = `${cookie}; ${remembered.split(';')[0]}`;
      const again = await get(both, '/dashboard/events');
      assert.match(again.body, new RegExp(`<option value="${first}" selected>`));
      // Another account's browser holding that cookie sees its own newest pixel, no 404.
      const theirs = await signIn(other);
      const foreign = await get(`${theirs.cookie}; tw_pixel=${first}`, '/dashboard/events');
      assert.equal(foreign.statusCode, 200);
      assert.ok(!foreign.body.includes(first));
    });

    it('shows revenue per currency, never summed across currencies', async () => {
      const pixelId = await h.pixel(acme);
      for (const [id, value, currency] of [
        ['eur-1', 10, 'EUR'],
        ['usd-1', 5.5, 'USD'],
      ] as const) {
        const res = await h.track(acme, {
          pixel_id: pixelId,
          event_name: 'Purchase',
          event_id: id,
          value,
          currency,
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const { cookie } = await signIn(acme);
      for (const url of [
        `/dashboard?pixel_id=${pixelId}&period=30d`,
        `/dashboard/diagnostics?pixel_id=${pixelId}&period=24h`,
        `/dashboard/events?pixel_id=${pixelId}`,
      ]) {
        const body = (await get(cookie, url)).body;
        assert.ok(body.includes('€10.00'), url);
        assert.ok(body.includes('$5.50'), url);
        assert.ok(!body.includes('15.5'), `${url} adds EUR to USD`);
      }
      const bad = await get(cookie, `/dashboard/diagnostics?pixel_id=${pixelId}&period=1y`);
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /period/);
    });

    it('signs in with a key into an HttpOnly, SameSite=Strict session cookie that holds no key', async () => {
      const { res, setCookie, cookie } = await signIn(acme);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/dashboard');
      assert.match(
        setCookie,
        /^tw_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/,
      );
      assert.ok(!setCookie.includes(acme.apiKey));
      const page = await get(cookie, '/dashboard');
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.ok(!page.body.includes(acme.apiKey), 'the key is never in a page');
    });

    it('serves its scripts for revalidation: an ETag, then 304 while the file is unchanged', async () => {
      const first = await h.app.inject({
        method: 'GET',
        url: '/dashboard/assets/chart.umd.min.js',
      });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['cache-control'], 'no-cache');
      const etag = String(first.headers['etag']);
      assert.match(etag, /^"[\w-]{22}"$/);
      const again = await h.app.inject({
        method: 'GET',
        url: '/dashboard/assets/chart.umd.min.js',
        headers: { 'if-none-match': etag },
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      const other = await h.app.inject({
        method: 'GET',
        url: '/dashboard/assets/dashboard.js',
        headers: { 'if-none-match': etag },
      });
      assert.equal(other.statusCode, 200, "another file's tag does not match");
      // Pages are never kept: they show the account's data.
      const page = await h.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
      assert.equal(page.headers['cache-control'], 'no-store');
    });

    it('refuses a wrong key, an ingest key, and a sign-in posted from another site', async () => {
      const wrong = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { ...FORM, ...SAME_ORIGIN },
        payload: 'api_key=tw_live_nope',
      });
      assert.equal(wrong.statusCode, 401);
      assert.equal(wrong.headers['set-cookie'], undefined);
      const ingest = await h.request(acme, {
        method: 'POST',
        url: '/v1/keys',
        payload: { name: 'sdk', scope: 'ingest' },
      });
      const refused = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { ...FORM, ...SAME_ORIGIN },
        payload: new URLSearchParams({ api_key: ingest.json().key }).toString(),
      });
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.headers['set-cookie'], undefined);
      const crossSite: Record<string, string>[] = [
        { 'sec-fetch-site': 'cross-site' },
        { origin: 'https://evil.example' },
        {},
      ];
      for (const headers of crossSite) {
        const { res } = await signIn(acme, headers);
        assert.equal(res.statusCode, 403, JSON.stringify(headers));
      }
    });

    it('refuses a signed-in form posted from another site (CSRF)', async () => {
      const { cookie } = await signIn(acme);
      for (const headers of [
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
        { origin: 'https://evil.example' },
        {},
      ]) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/dashboard/keys',
          headers: { ...FORM, ...headers, cookie },
          payload: 'name=stolen',
        });
        assert.equal(res.statusCode, 403, JSON.stringify(headers));
      }
      const keys = await h.request(acme, { method: 'GET', url: '/v1/keys' });
      assert.ok(!keys.json().keys.some((k: { name: string }) => k.name === 'stolen'));
      const sameOrigin = await h.app.inject({
        method: 'POST',
        url: '/dashboard/keys',
        headers: { ...FORM, origin: 'http://localhost:80', host: 'localhost:80', cookie },
        payload: 'name=mine',
      });
      assert.equal(sameOrigin.statusCode, 201, 'an Origin equal to the server is accepted');
    });

    it('ends the session on sign-out and when its key is revoked', async () => {
      const { cookie } = await signIn(acme);
      const out = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-out',
        headers: { ...SAME_ORIGIN, cookie },
      });
      assert.equal(out.statusCode, 303);
      assert.match(String(out.headers['set-cookie']), /^tw_session=; Path=\/dashboard; Max-Age=0/);
      const after = await get(cookie, '/dashboard');
      assert.equal(after.statusCode, 303);
      assert.equal(after.headers.location, '/dashboard/sign-in');

      const spare = await h.request(acme, {
        method: 'POST',
        url: '/v1/keys',
        payload: { name: 'spare' },
      });
      const owner = { ...acme, apiKey: spare.json().key };
      const session = await signIn(owner);
      assert.equal((await get(session.cookie, '/dashboard/keys')).statusCode, 200);
      await h.request(acme, { method: 'DELETE', url: `/v1/keys/${spare.json().id}` });
      assert.equal((await get(session.cookie, '/dashboard/keys')).statusCode, 303);
    });

    it("shows only the account's own data: another account's pixel is 404", async () => {
      const theirs = await h.pixel(other, { name: 'Their shop', domain: 'their.example.com' });
      const { cookie } = await signIn(acme);
      const res = await get(cookie, `/dashboard/pixels/${theirs}`);
      assert.equal(res.statusCode, 404);
      assert.ok(!res.body.includes('Their shop'));
      const events = await get(cookie, `/dashboard/events?pixel_id=${theirs}`);
      assert.ok(!events.body.includes(theirs), 'falls back to an own pixel, never theirs');
      const stream = await get(cookie, `/dashboard/pixels/${theirs}/stream`);
      assert.equal(stream.statusCode, 404);
    });

    it('escapes what the account sent: an event name cannot become markup', async () => {
      // An account of its own: the suite's account is at its plan's pixel quota by now.
      const writer = await h.account('pro');
      const pixelId = await h.pixel(writer, { name: '<b>Shop</b>', domain: 'shop.example.com' });
      await h.track(writer, {
        pixel_id: pixelId,
        event_name: '<img src=x onerror=alert(1)>',
        event_id: 'x1',
      });
      const { cookie } = await signIn(writer);
      for (const url of [
        `/dashboard/events?pixel_id=${pixelId}`,
        `/dashboard?pixel_id=${pixelId}`,
        '/dashboard/pixels',
      ]) {
        const res = await get(cookie, url);
        assert.equal(res.statusCode, 200, url);
        assert.ok(!res.body.includes('<img src=x'), url);
        assert.ok(!res.body.includes('<b>Shop</b>'), url);
      }
    });

    it('counts dashboard pages against the account like API requests, and shows the usage', async () => {
      const { cookie } = await signIn(acme);
      const page = await get(cookie, '/dashboard');
      assert.ok(page.headers['x-ratelimit-remaining']);
      assert.match(page.body, /of 500 requests/);
    });

    if (kind.name === 'postgres') {
      it('serves a session on another instance (sessions live in the database)', async () => {
        const { cookie } = await signIn(acme);
        const store2 = await PostgresStore.open({
          url: postgresUrl((h.adapter as PostgresStore).schema!),
          poolSize: 2,
        });
        const app2 = await buildApp({
          store: store2,
          clock: h.clock,
          config: { trustProxy: false, webhookAllowPrivate: true, webhookAllowHttp: true },
          logger: testLogger(),
          rateLimiter: null,
        });
        try {
          const res = await app2.inject({
            method: 'GET',
            url: '/dashboard/keys',
            headers: { cookie },
          });
          assert.equal(res.statusCode, 200);
          assert.match(res.body, /API keys/);
        } finally {
          await app2.close();
          await store2.close();
        }
      });
    }
  });
}
