/**
 * Hostile input (issue 7): random and mutated bodies, headers and query strings at every
 * route. Whatever arrives, the answer is never a 500 and never a crash, and every error has the
 * `{error, message}` shape (plus `field` or `retry_after`). In-process through app.inject, so
 * thousands of requests take seconds; the figures are printed for RELIABILITY.md.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { type Harness, startHarness, type TestAccount, testStores } from './harness.ts';

/** Requests on SQLite (a fifth of that on PostgreSQL); TRACKWAY_FUZZ_RUNS to go further. */
const RUNS = Number(process.env['TRACKWAY_FUZZ_RUNS'] ?? 10_000);

interface Target {
  method: InjectOptions['method'];
  url: (ids: Ids) => string;
  body: boolean;
}
interface Ids {
  pixel: string;
  webhook: string;
  message: string;
}

const TARGETS: Target[] = [
  { method: 'POST', url: () => '/v1/track', body: true },
  { method: 'POST', url: () => '/v1/track/batch', body: true },
  { method: 'GET', url: () => '/v1/pixels', body: false },
  { method: 'POST', url: () => '/v1/pixels', body: true },
  { method: 'GET', url: (i) => `/v1/pixels/${i.pixel}`, body: false },
  { method: 'PATCH', url: (i) => `/v1/pixels/${i.pixel}`, body: true },
  { method: 'GET', url: (i) => `/v1/pixels/${i.pixel}/events`, body: false },
  { method: 'POST', url: () => '/v1/webhooks', body: true },
  { method: 'GET', url: () => '/v1/webhooks', body: false },
  { method: 'GET', url: (i) => `/v1/webhooks/${i.webhook}`, body: false },
  { method: 'PATCH', url: (i) => `/v1/webhooks/${i.webhook}`, body: true },
  { method: 'POST', url: (i) => `/v1/webhooks/${i.webhook}/rotate-secret`, body: true },
  { method: 'GET', url: (i) => `/v1/webhooks/${i.webhook}/deliveries`, body: false },
  {
    method: 'POST',
    url: (i) => `/v1/webhooks/${i.webhook}/deliveries/${i.message}/retry`,
    body: true,
  },
  { method: 'POST', url: (i) => `/v1/webhooks/${i.webhook}/test`, body: true },
  { method: 'GET', url: () => '/healthz', body: false },
  { method: 'GET', url: () => '/readyz', body: false },
  { method: 'GET', url: () => '/v1/openapi.json', body: false },
];

const validEvent = (pixel: string) => ({
  pixel_id: pixel,
  event_name: 'Purchase',
  event_id: 'evt-1',
  value: 10,
  currency: 'USD',
  timestamp: '2026-01-01T00:00:00Z',
  url: 'https://shop.example.com/',
  user_data: { email: 'a@example.com', phone: '+16505551212', country: 'US' },
  custom_data: { sku: 'x' },
});

const nasty = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '',
  'é',
  '\u0000',
  '\ud800',
  '💥',
  'a'.repeat(5_000),
);

/** A JSON value, sometimes hostile: huge numbers, deep nesting, pollution keys, odd unicode. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.1 + 0.2, -0),
  nasty,
  fc.dictionary(nasty, fc.jsonValue()),
);

/** A body: raw junk, JSON of any shape, or a valid event with one field mutated. */
const body = (ids: Ids): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string(),
    fc.constantFrom(
      '',
      '{',
      'null',
      '[]',
      '"x"',
      '1e999',
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"admin":true}}}',
      `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
      `{"a":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`,
      `{"events":[${Array.from({ length: 1_001 }, () => '{}').join(',')}]}`,
    ),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .tuple(
        fc.constantFrom(...Object.keys(validEvent(ids.pixel)), 'extra', 'events', 'url', 'name'),
        hostileValue,
      )
      .map(([key, value]) => {
        const event: Record<string, unknown> = { ...validEvent(ids.pixel) };
        event[key] = value;
        return JSON.stringify(Math.random() < 0.2 ? { events: [event] } : event);
      }),
  );

const query = fc.dictionary(
  fc.constantFrom('limit', 'offset', 'event_name', 'start_date', 'end_date', 'x', '__proto__'),
  fc.oneof(fc.string(), fc.constantFrom('-1', '1e9', '0', 'NaN', '2026-02-30', '%', '%00')),
);

/** Mostly well-labelled JSON, so most requests reach validation; sometimes anything else. */
const headers = fc
  .record(
    {
      'content-type': fc.constantFrom(
        'application/json',
        'application/json',
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        '',
        'application/json; charset=latin1',
      ),
      'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'deflate, gzip'),
      authorization: fc.constantFrom('Bearer', 'Basic abc', 'Bearer tw_live_x', 'bearer  x'),
    },
    { requiredKeys: ['content-type'] },
  )
  .map((h) => (Math.random() < 0.8 ? { 'content-type': h['content-type'] } : h));

function assertShape(status: number, raw: string, where: string): void {
  assert.ok(status < 500, `${where}: status ${status} ${raw.slice(0, 300)}`);
  if (status < 400) return;
  const parsed = JSON.parse(raw) as Record<string, unknown>;
  assert.equal(typeof parsed['error'], 'string', `${where}: ${raw.slice(0, 300)}`);
  assert.equal(typeof parsed['message'], 'string', `${where}: ${raw.slice(0, 300)}`);
  for (const key of Object.keys(parsed)) {
    assert.ok(['error', 'message', 'field', 'retry_after'].includes(key), `${where}: key ${key}`);
  }
}

for (const kind of await testStores()) {
  describe(`hostile input at every route [${kind.name}]`, () => {
    let h: Harness;
    let owner: TestAccount;
    let ids: Ids;
    const statuses = new Map<number, number>();
    let tried = 0;

    before(async () => {
      h = await startHarness(kind);
      owner = await h.account('enterprise');
      const pixel = await h.pixel(owner);
      const hook = await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'https://hooks.example.com/x' },
      });
      ids = { pixel, webhook: hook.json().id, message: 'msg_unknown' };
    });
    after(async () => {
      console.log(
        `hostile input [${kind.name}]: ${tried} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, 500s: ${statuses.get(500) ?? 0}`,
      );
      await h.close();
    });

    it(`answers ${RUNS} random requests with no 500 and the error shape`, async () => {
      const runs = kind.name === 'sqlite' ? RUNS : Math.ceil(RUNS / 5);
      await fc.assert(
        fc.asyncProperty(
          fc.nat(TARGETS.length - 1),
          query,
          headers,
          fc.boolean(),
          fc.nat(),
          fc.ipV4(),
          async (index, q, extraHeaders, withKey, seed, ip) => {
            const target = TARGETS[index]!;
            const payload = target.body
              ? fc.sample(body(ids), { numRuns: 1, seed })[0]!
              : undefined;
            const search = new URLSearchParams(q as Record<string, string>).toString();
            // A new client address each time: the failed-authentication limit (20 a minute
            // per IP) would otherwise answer most of the run with 429 and test nothing else.
            const res = await h.app.inject({
              remoteAddress: ip,
              method: target.method,
              url: `${target.url(ids)}${search ? `?${search}` : ''}`,
              headers: {
                ...(withKey ? owner.headers : {}),
                ...(extraHeaders as Record<string, string>),
              },
              ...(payload !== undefined && { payload }),
            });
            tried += 1;
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            assertShape(
              res.statusCode,
              res.body,
              `${target.method} ${target.url(ids)} ${JSON.stringify(extraHeaders)} body ${JSON.stringify(payload)?.slice(0, 400)}`,
            );
          },
        ),
        { numRuns: runs },
      );
    });

    it('refuses JSON nested deeper than 64 levels with a 400, before anything recurses', async () => {
      const post = (payload: string) =>
        h.request(owner, {
          method: 'POST',
          url: '/v1/track',
          headers: { 'content-type': 'application/json' },
          payload,
        });
      for (const payload of [
        `${'['.repeat(15_000)}${']'.repeat(15_000)}`,
        `{"a":${'{"a":'.repeat(65)}1${'}'.repeat(65)}}`,
      ]) {
        const res = await post(payload);
        assert.equal(res.statusCode, 400);
        assert.deepEqual(res.json(), {
          error: 'Invalid request',
          message: 'Malformed JSON body: nested deeper than 64 levels',
        });
      }
      // 64 levels is still parsed (and then judged on its fields).
      const ok = `{"custom_data":${'{"a":'.repeat(62)}1${'}'.repeat(62)}}`;
      assert.match((await post(ok)).json().message, /^Missing required field/);
    });

    it('answers malformed and overlong paths in the error shape, with the usual headers', async () => {
      for (const url of ['/v1/pixels/%ff', '/v1/pixels/%E2%82/events', '/v1/%ff', '/%c0']) {
        for (const headers of [owner.headers, {}]) {
          const res = await h.app.inject({ method: 'GET', url, headers });
          assert.equal(res.statusCode, 400, url);
          assert.deepEqual(res.json(), {
            error: 'Invalid request',
            message: 'Malformed URL: a percent-encoded part of the path is not valid UTF-8',
          });
          assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, url);
        }
      }
      // An id longer than the router's default parameter limit (100) is just not found.
      const long = `px_${'a'.repeat(300)}`;
      const res = await h.request(owner, { method: 'GET', url: `/v1/pixels/${long}` });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { error: 'Not found', message: `Pixel not found: ${long}` });
    });

    it('keeps prototypes clean after pollution attempts', () => {
      assert.equal(({} as Record<string, unknown>)['admin'], undefined);
      assert.equal(Object.hasOwn(Object.prototype, 'admin'), false);
    });
  });
}

describe('security headers', () => {
  it('puts a CSP and anti-framing headers on the docs page, no-store on the API', async () => {
    const [sqlite] = await testStores();
    const h = await startHarness(sqlite!);
    try {
      const docs = await h.app.inject({ method: 'GET', url: '/docs' });
      assert.equal(docs.statusCode, 200);
      assert.match(String(docs.headers['content-security-policy']), /script-src 'self'/);
      assert.match(String(docs.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(docs.headers['x-frame-options'], 'DENY');
      assert.equal(docs.headers['x-content-type-options'], 'nosniff');
      const owner = await h.account();
      const api = await h.request(owner, { method: 'GET', url: '/v1/pixels' });
      assert.equal(api.headers['cache-control'], 'no-store');
      assert.equal(api.headers['x-content-type-options'], 'nosniff');
    } finally {
      await h.close();
    }
  });
});
