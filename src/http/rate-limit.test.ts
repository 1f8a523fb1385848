/**
 * Rate limits through HTTP (contract §7), in-process with a test clock: the clock is set to a
 * known instant, so headers and `retry_after` are exact values and window boundaries are
 * crossed by moving the clock.
 */

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { loadConfig } from '../config.ts';
import { createKey, type PlanChange, setPlan } from '../domain/accounts/accounts.ts';

const epoch = (iso: string) => Date.parse(iso) / 1000;

function limitHeaders(res: LightMyRequestResponse) {
  return {
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
    reset: res.headers['x-ratelimit-reset'],
  };
}

for (const kind of await testStores()) {
  describe(`rate limits over HTTP (${kind.name})`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await startHarness(kind);
      h.clock.set('2026-03-14T12:00:42.300Z');
    });
    afterEach(() => h.close());

    const get = (owner: TestAccount | null, headers: Record<string, string> = {}) =>
      h.request(owner, { method: 'GET', url: '/v1/pixels', headers });
    // A plan change reaches every instance within 1 s (contract §7: key lookups are cached
    // that long), so the clock moves on by just over a second, inside the same minute.
    const plan = async (owner: TestAccount, change: PlanChange) => {
      await setPlan({ store: h.store, clock: h.clock }, owner.account.id, change);
      h.clock.set(new Date(h.clock.now().getTime() + 1_001));
    };

    it('puts the plan limits and the IETF fields on every authenticated response', async () => {
      const owner = await h.account('pro');
      const ok = await get(owner);
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(limitHeaders(ok), {
        limit: '500',
        remaining: '499',
        reset: String(epoch('2026-03-14T12:01:00Z')),
      });
      assert.equal(ok.headers['ratelimit-policy'], '"minute";q=500;w=60, "day";q=720000;w=86400');
      // 17.7 s left in the minute → t=18; 11 h 59 min 17.7 s left in the day → t=43158.
      assert.equal(ok.headers['ratelimit'], '"minute";r=499;t=18, "day";r=719999;t=43158');

      const invalid = await h.track(owner, { event_name: 'Purchase' });
      assert.equal(invalid.statusCode, 400);
      assert.equal(invalid.headers['x-ratelimit-remaining'], '498');
      const missing = await h.request(owner, { method: 'GET', url: '/v1/pixels/px_nope' });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.headers['x-ratelimit-remaining'], '497');
    });

    it('answers 429 with retry_after and Retry-After once the minute is used up', async () => {
      const owner = await h.account('enterprise');
      await plan(owner, { requestsPerMinute: 3, dailyLimit: 1000 });
      for (let i = 0; i < 3; i++) assert.equal((await get(owner)).statusCode, 200);
      const refused = await get(owner);
      assert.equal(refused.statusCode, 429);
      // 12:00:43.301 after the plan change: 16.7 s left in the minute → 17.
      assert.equal(
        refused.body,
        '{"error":"Rate limit exceeded","message":"Too many requests. Please try again later.","retry_after":17}',
      );
      assert.equal(refused.headers['retry-after'], '17');
      assert.deepEqual(limitHeaders(refused), {
        limit: '3',
        remaining: '0',
        reset: String(epoch('2026-03-14T12:01:00Z')),
      });
      // A POST is refused before its body is looked at, and counts nothing either.
      assert.equal((await h.track(owner, {})).statusCode, 429);

      h.clock.set('2026-03-14T12:00:59.999Z');
      const last = await get(owner);
      assert.equal(last.statusCode, 429);
      assert.equal(last.json().retry_after, 1, 'never 0, even a millisecond before the reset');

      h.clock.set('2026-03-14T12:01:00Z');
      const next = await get(owner);
      assert.equal(next.statusCode, 200);
      assert.equal(next.headers['x-ratelimit-remaining'], '2');
      // The three refusals took nothing from the day: 4 admitted of 1000.
      assert.match(String(next.headers['ratelimit']), /"day";r=996;/);
    });

    it('describes the daily window once it has less room, and lets it refuse', async () => {
      const owner = await h.account('enterprise');
      await plan(owner, { requestsPerMinute: 10, dailyLimit: 12 });
      for (let i = 0; i < 4; i++) await get(owner);
      const minuteBinds = await get(owner);
      assert.deepEqual(limitHeaders(minuteBinds), {
        limit: '10',
        remaining: '5',
        reset: String(epoch('2026-03-14T12:01:00Z')),
      });
      h.clock.set('2026-03-14T23:59:30Z');
      const dayBinds = await get(owner);
      assert.deepEqual(limitHeaders(dayBinds), {
        limit: '12',
        remaining: '6',
        reset: String(epoch('2026-03-15T00:00:00Z')),
      });
      for (let i = 0; i < 6; i++) assert.equal((await get(owner)).statusCode, 200);
      const refused = await get(owner);
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().retry_after, 30);
      assert.equal(refused.headers['retry-after'], '30');
      assert.equal(refused.headers['x-ratelimit-limit'], '12');

      h.clock.set('2026-03-15T00:00:00Z');
      assert.equal((await get(owner)).statusCode, 200);
    });

    it('applies a plan change on the next request without resetting the windows', async () => {
      const owner = await h.account('pro');
      for (let i = 0; i < 3; i++) await get(owner);
      await plan(owner, { plan: 'enterprise', requestsPerMinute: 4 });
      const fourth = await get(owner);
      assert.equal(fourth.statusCode, 200);
      assert.equal(fourth.headers['x-ratelimit-limit'], '4');
      assert.equal(fourth.headers['x-ratelimit-remaining'], '0');
      assert.equal((await get(owner)).statusCode, 429);
      await plan(owner, { plan: 'ultra' });
      const ultra = await get(owner);
      assert.equal(ultra.statusCode, 200);
      assert.equal(ultra.headers['x-ratelimit-limit'], '2000');
      assert.equal(ultra.headers['x-ratelimit-remaining'], '1995');
    });

    it('counts all keys of an account together', async () => {
      const owner = await h.account('enterprise');
      await plan(owner, { requestsPerMinute: 2 });
      const res = await h.request(null, {
        method: 'GET',
        url: '/v1/pixels',
        headers: { authorization: owner.headers.authorization },
      });
      assert.equal(res.statusCode, 200);
      const second = await createKey({ store: h.store, clock: h.clock }, owner.account.id);
      const other = { ...owner, headers: { authorization: `Bearer ${second.apiKey}` } };
      assert.equal((await get(other)).headers['x-ratelimit-remaining'], '0');
      assert.equal((await get(owner)).statusCode, 429);
    });

    it('limits failed authentications per client IP, still serving valid keys', async () => {
      const owner = await h.account('pro');
      const from = (ip: string, authorization?: string) =>
        h.app.inject({
          method: 'GET',
          url: '/v1/pixels',
          remoteAddress: ip,
          headers: authorization ? { authorization } : {},
        });
      const bad = 'Bearer tw_live_not_a_real_key';
      for (let i = 0; i < 20; i++) {
        const res = await from('203.0.113.7', i % 2 ? bad : undefined);
        assert.equal(res.statusCode, 401);
        assert.equal(res.headers['x-ratelimit-limit'], undefined, 'no account, no quota headers');
      }
      const blocked = await from('203.0.113.7', bad);
      assert.equal(blocked.statusCode, 429);
      assert.deepEqual(blocked.json(), {
        error: 'Rate limit exceeded',
        message: 'Too many requests. Please try again later.',
        retry_after: 18,
      });
      assert.equal(blocked.headers['retry-after'], '18');
      assert.equal((await from('203.0.113.7')).statusCode, 429, 'a missing key too');
      assert.equal((await from('203.0.113.7', owner.headers.authorization)).statusCode, 200);
      assert.equal((await from('198.51.100.1', bad)).statusCode, 401, 'another IP is not blocked');

      h.clock.set('2026-03-14T12:01:00Z');
      assert.equal((await from('203.0.113.7', bad)).statusCode, 401, 'a new minute, a new count');
    });

    it('ignores X-Forwarded-For unless TRACKWAY_TRUST_PROXY is set', async () => {
      const bad = { authorization: 'Bearer nope' };
      const send = (app: Harness, forwarded: string) =>
        app.app.inject({
          method: 'GET',
          url: '/v1/pixels',
          remoteAddress: '10.0.0.1',
          headers: { ...bad, 'x-forwarded-for': forwarded },
        });
      // Untrusted: rotating the header does not escape the socket's count.
      for (let i = 0; i < 20; i++) await send(h, `192.0.2.${i}`);
      assert.equal((await send(h, '192.0.2.99')).statusCode, 429);

      const proxied = await startHarness(kind, { trustProxy: 1 });
      try {
        for (let i = 0; i < 20; i++) await send(proxied, '192.0.2.1');
        assert.equal((await send(proxied, '192.0.2.1')).statusCode, 429);
        assert.equal((await send(proxied, '192.0.2.2')).statusCode, 401, 'the client behind it');
      } finally {
        await proxied.close();
      }
    });

    /** 30 failed logins, each with a new first X-Forwarded-For entry (the client writes it). */
    const rotatingFirstEntry = async (app: Harness, behind: string, socket: string) => {
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const res = await app.app.inject({
          method: 'GET',
          url: '/v1/pixels',
          remoteAddress: socket,
          headers: { authorization: 'Bearer nope', 'x-forwarded-for': `192.0.2.${i}, ${behind}` },
        });
        statuses.push(res.statusCode);
      }
      return statuses;
    };

    it('TRACKWAY_TRUST_PROXY=true takes the rightmost X-Forwarded-For entry, not the first', async () => {
      const { trustProxy } = loadConfig({ TRACKWAY_TRUST_PROXY: 'true' });
      const proxied = await startHarness(kind, { trustProxy });
      try {
        const statuses = await rotatingFirstEntry(proxied, '198.51.100.9', '10.0.0.1');
        assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(10).fill(429)]);
      } finally {
        await proxied.close();
      }
    });

    it('TRACKWAY_TRUST_PROXY as a list skips every trusted proxy, however many hops', async () => {
      const { trustProxy } = loadConfig({ TRACKWAY_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' });
      const proxied = await startHarness(kind, { trustProxy });
      try {
        // Two trusted proxies (10.0.0.2 added by the inner one, the socket is the outer one).
        const statuses = await rotatingFirstEntry(proxied, '198.51.100.9, 10.0.0.2', '10.0.0.1');
        assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(10).fill(429)]);
      } finally {
        await proxied.close();
      }
    });
  });
}
