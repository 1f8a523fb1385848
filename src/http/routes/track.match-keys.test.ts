/**
 * Match keys on the track routes (contract §11) and match quality on the records and the pixel
 * (§12), through the HTTP API on both stores: validation in the track route's own error style,
 * hashes only in every record, the raw keys kept apart and erased after 7 days (the sweep, on
 * the test clock), by the erasure endpoint, and `match_quality_7d`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import {
  eraseExpiredMatchKeys,
  SWEEP_FIRST_AFTER_MS,
  startMatchKeysSweep,
} from '../../domain/lifecycle/match-keys-sweep.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15';
const DAY = 86_400_000;
const FAR_FUTURE = new Date('2100-01-01T00:00:00.000Z');

const MATCH_KEYS = {
  client_ip_address: '2001:db8::7',
  client_user_agent: UA,
  fbc: 'fb.1.1732473730000.IwAR2xYz',
  fbp: 'fb.1.1732473730000.1098115397',
  ttclid: 'E.C.P.v1abc',
  ttp: '2Xy-ttp',
  ga_client_id: '1234567890.1732473730',
};

for (const kind of await testStores()) {
  describe(`match keys on /v1/track [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
    });
    after(() => h.close());

    const expect400 = async (body: Record<string, unknown>, message: string, field: string) => {
      const res = await h.track(acme, { pixel_id: pixelId, event_name: 'Purchase', ...body });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { error: 'Invalid request', message, field });
    };
    const record = async (pixel: string, eventId: string, owner = acme) => {
      const res = await h.request(owner, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/events?limit=100`,
      });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().events as Array<Record<string, unknown>>).find(
        (e) => e.event_id === eventId,
      );
    };
    const raw = async (eventId: string, pixel = pixelId) =>
      (await h.store.matchKeys.forwardable(acme.account.id, pixel, [eventId]))[0]?.matchKeys;

    it('drops malformed match keys with a warning and keeps the event (§19)', async () => {
      const cases: Array<[Record<string, string>, string]> = [
        [
          { client_ip_address: '256.1.1.1' },
          'user_data.client_ip_address dropped: must be an IPv4 or IPv6 address',
        ],
        [
          { client_ip_address: '010.1.1.1' },
          'user_data.client_ip_address dropped: must be an IPv4 or IPv6 address',
        ],
        [
          { fbc: 'IwAR2xYz' },
          'user_data.fbc dropped: must be a Meta click id cookie: fb.<n>.<ms>.<fbclid>',
        ],
        [
          { fbp: 'fb.1.abc.123' },
          'user_data.fbp dropped: must be a Meta browser id cookie: fb.<n>.<ms>.<random>',
        ],
        [
          { client_user_agent: 'x'.repeat(513) },
          'user_data.client_user_agent dropped: must be at most 512 characters',
        ],
        [{ ttclid: 'x'.repeat(257) }, 'user_data.ttclid dropped: must be at most 256 characters'],
      ];
      for (const [user_data, warning] of cases) {
        const res = await h.track(acme, { pixel_id: pixelId, event_name: 'Purchase', user_data });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json().warnings, [warning]);
      }
      // A wrong JSON type is still refused.
      await expect400(
        { user_data: { client_ip_address: 17 } },
        'Invalid field: user_data.client_ip_address must be a string',
        'user_data.client_ip_address',
      );
      const source = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        action_source: 'billboard',
      });
      assert.equal(source.statusCode, 400, source.body);
      assert.deepEqual(source.json(), {
        error: 'Invalid request',
        message:
          'Invalid field: action_source must be one of: website, app, email, phone_call, chat, physical_store, system_generated, other',
        field: 'action_source',
      });
      // The dropped ones were stored (without the key), the refused ones not.
      const list = await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}/events` });
      assert.equal(list.json().total, cases.length);
      for (const event of list.json().events) {
        assert.equal(event.dropped.length, 1);
        assert.deepEqual(event.user_data, {});
      }
    });

    it('stores only hashes in the record, with action_source and match_quality', async () => {
      const res = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'with-keys',
        action_source: 'app',
        user_data: { email: 'Jane@Example.com', ...MATCH_KEYS },
      });
      assert.equal(res.statusCode, 200, res.body);
      const r = await record(pixelId, 'with-keys');
      assert.ok(r);
      assert.equal(r.action_source, 'app');
      assert.deepEqual(r.user_data, {
        email: sha256('jane@example.com'),
        client_ip_address: sha256(MATCH_KEYS.client_ip_address),
        client_user_agent: sha256(UA),
        fbc: sha256(MATCH_KEYS.fbc),
        fbp: sha256(MATCH_KEYS.fbp),
        ttclid: sha256(MATCH_KEYS.ttclid),
        ttp: sha256(MATCH_KEYS.ttp),
        ga_client_id: sha256(MATCH_KEYS.ga_client_id),
      });
      // email 2.5 + fbc 1.5 + fbp 1 + ip 0.75 + ua 0.75.
      assert.deepEqual(r.match_quality, {
        score: 6.5,
        keys: ['email', 'fbc', 'fbp', 'client_ip_address', 'client_user_agent'],
        missing: [
          'phone',
          'external_id',
          'country',
          'first_name',
          'last_name',
          'city',
          'state',
          'zip',
        ],
      });
      // No raw key in the list, the export or the event.tracked payload's source: the record.
      const exported = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events/export?format=ndjson`,
      });
      assert.equal(exported.statusCode, 200, exported.body);
      const line = exported.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((e) => e.event_id === 'with-keys');
      assert.deepEqual(line.match_quality, r.match_quality);
      assert.equal(line.action_source, 'app');
      for (const body of [JSON.stringify(r), exported.body]) {
        for (const value of Object.values(MATCH_KEYS)) assert.ok(!body.includes(value), value);
      }
      // The raw values are kept apart, for forwarding.
      assert.deepEqual(await raw('with-keys'), {
        clientIpAddress: MATCH_KEYS.client_ip_address,
        clientUserAgent: UA,
        fbc: MATCH_KEYS.fbc,
        fbp: MATCH_KEYS.fbp,
        ttclid: MATCH_KEYS.ttclid,
        ttp: MATCH_KEYS.ttp,
        gaClientId: MATCH_KEYS.ga_client_id,
      });
    });

    it("takes every platform's click id and cookie under its own name (contract §18)", async () => {
      const clicks = {
        gclid: 'Cj0KCQiA-gclid',
        gbraid: '0AAAAA-gbraid',
        wbraid: 'CjkK-wbraid',
        epik: 'dj0yJnU9-epik',
        ScCid: 'sc-click-1',
        _scid: 'scid-cookie-1',
        rdt_cid: 'rdt-click-1',
        _rdt_uuid: '1732473730000.rdt-uuid',
        msclkid: 'ms-click-1',
        _uetvid: 'uetvid-1',
        li_fat_id: 'li-fat-1',
      };
      const res = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'with-click-ids',
        user_data: clicks,
      });
      assert.equal(res.statusCode, 200, res.body);
      const r = await record(pixelId, 'with-click-ids');
      assert.ok(r);
      assert.deepEqual(
        r.user_data,
        Object.fromEntries(Object.entries(clicks).map(([k, v]) => [k, sha256(v)])),
      );
      assert.deepEqual(await raw('with-click-ids'), {
        gclid: clicks.gclid,
        gbraid: clicks.gbraid,
        wbraid: clicks.wbraid,
        epik: clicks.epik,
        scCid: clicks.ScCid,
        scid: clicks._scid,
        rdtCid: clicks.rdt_cid,
        rdtUuid: clicks._rdt_uuid,
        msclkid: clicks.msclkid,
        uetvid: clicks._uetvid,
        liFatId: clicks.li_fat_id,
      });
      // A value no platform would have set is left out with a warning; the event is kept.
      const spaced = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        user_data: { gclid: 'has a space', msclkid: 'ms-ok' },
      });
      assert.equal(spaced.statusCode, 200, spaced.body);
      assert.deepEqual(spaced.json().warnings, [
        'user_data.gclid dropped: must be the value as the platform set it (printable, no spaces)',
      ]);
    });

    it('takes match keys in each batch event, refusing a bad one in its slot only', async () => {
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: {
          events: [
            {
              pixel_id: pixelId,
              event_name: 'Lead',
              event_id: 'batch-ok',
              action_source: 'chat',
              user_data: { client_ip_address: '203.0.113.9', fbp: MATCH_KEYS.fbp },
            },
            {
              pixel_id: pixelId,
              event_name: 'Lead',
              event_id: 'batch-bad',
              action_source: 'nowhere',
            },
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.accepted, 1);
      assert.equal(body.results[1].status, 400);
      assert.equal(body.results[1].field, 'action_source');
      const r = await record(pixelId, 'batch-ok');
      assert.equal(r?.action_source, 'chat');
      assert.equal(
        (r?.user_data as Record<string, string> | undefined)?.client_ip_address,
        sha256('203.0.113.9'),
      );
      assert.deepEqual(await raw('batch-ok'), {
        clientIpAddress: '203.0.113.9',
        fbp: MATCH_KEYS.fbp,
      });
    });

    it('gives GET /v1/pixels/:id the 7-day match quality, null without events', async () => {
      const fresh = await h.pixel(acme);
      const get = (owner: TestAccount, id: string) =>
        h.request(owner, { method: 'GET', url: `/v1/pixels/${id}` });
      const empty = await get(acme, fresh);
      assert.equal(empty.statusCode, 200, empty.body);
      assert.equal(empty.json().match_quality_7d, null);
      const now = h.clock.now().getTime();
      const send = (event_id: string, daysAgo: number, user_data?: Record<string, string>) =>
        h.track(acme, {
          pixel_id: fresh,
          event_name: 'Purchase',
          event_id,
          timestamp: new Date(now - daysAgo * DAY).toISOString(),
          ...(user_data && { user_data }),
        });
      assert.equal((await send('a', 0, { email: 'a@example.com' })).statusCode, 200); // 2.5
      assert.equal(
        (await send('b', 1, { email: 'b@example.com', fbc: MATCH_KEYS.fbc })).statusCode,
        200,
      ); // 4
      assert.equal((await send('c', 2)).statusCode, 200); // 0
      assert.equal(
        (await send('old', 9, { email: 'o@example.com', phone: '+14155552671' })).statusCode,
        200,
      );
      const got = await get(acme, fresh);
      assert.equal(got.json().match_quality_7d, Math.round((6.5 / 3) * 10) / 10);
      // Each record carries its own score; the average is over the last 7 days only.
      const old = (await record(fresh, 'old'))?.match_quality as { score: number };
      assert.equal(old.score, 4);
      // Another account: 404, as for every pixel route.
      assert.equal((await get(other, fresh)).statusCode, 404);
    });

    it('erases the raw keys 7 days after the event, by the sweep on the clock', async () => {
      const t = h.clock.now().getTime();
      const res = await h.track(acme, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: 'swept',
        timestamp: new Date(t).toISOString(),
        user_data: { client_ip_address: '198.51.100.23', city: 'Lyon' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await raw('swept'))?.clientIpAddress, '198.51.100.23');
      const reports: number[] = [];
      const stop = startMatchKeysSweep(
        { store: h.store, clock: h.clock },
        { erased: (n) => reports.push(n), failed: (e) => assert.fail(String(e)) },
      );
      try {
        // The first sweep, 30 s in: still within 7 days, nothing of this event goes.
        h.clock.advance(SWEEP_FIRST_AFTER_MS);
        await until(() => reports.length === 1);
        assert.equal((await raw('swept'))?.clientIpAddress, '198.51.100.23');
        // Past 7 days: the next sweep erases it (and the earlier events' keys, as old).
        h.clock.set(new Date(t + 7 * DAY + 1));
        await until(() => reports.length === 2);
        assert.ok(reports[1]! >= 1);
        assert.equal(await raw('swept'), null);
        const r = await record(pixelId, 'swept');
        assert.equal(
          (r?.user_data as Record<string, string> | undefined)?.client_ip_address,
          sha256('198.51.100.23'),
          'the record and its hashes stay',
        );
      } finally {
        await stop();
        h.clock.set(new Date(t));
      }
    });

    it('deletes the raw keys of erased events (POST /v1/pixels/:id/erasure)', async () => {
      // Sweep what earlier tests left, so the count below is this test's rows only.
      await eraseExpiredMatchKeys({ store: h.store, clock: { now: () => FAR_FUTURE } });
      const shop = await h.pixel(acme);
      for (const [id, email] of [
        ['paul', 'paul@example.com'],
        ['quinn', 'quinn@example.com'],
      ] as const) {
        const res = await h.track(acme, {
          pixel_id: shop,
          event_name: 'Purchase',
          event_id: id,
          user_data: { email, client_ip_address: '192.0.2.44', fbp: MATCH_KEYS.fbp },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${shop}/erasure`,
        payload: { user_data: { email: 'Paul@example.com' } },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { deleted: 1 });
      // Paul's raw row went with his event: only Quinn's is left to sweep.
      assert.deepEqual(await h.store.matchKeys.forwardable(acme.account.id, shop, ['paul']), []);
      assert.equal(await h.store.matchKeys.eraseExpired(FAR_FUTURE, 100), 1);
    });
  });
}

/** Waits, turn by turn of the event loop (never a timer), until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (done()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  assert.fail('condition never held');
}
