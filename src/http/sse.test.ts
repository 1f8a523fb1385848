import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  bareEvent,
  type Harness,
  startHarness,
  type TestAccount,
  testStores,
} from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import { testRedis } from '../../test/redis.ts';
import { RedisStreamSlots, STREAMS_PER_ACCOUNT } from '../rate-limit/stream-slots.ts';
import { buildApp } from './app.ts';
import { MAX_UNSENT_BYTES } from './sse.ts';

// The live tail stays fair (contract §21): slow readers, many streams, revoked keys and ended
// sessions cannot make one account's streams cost the server or the other accounts.

const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const until = async (check: () => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** A stream read (or not) through node:http: its bytes, and whether the server ended it. */
function rawStream(url: string, headers: Record<string, string>) {
  const state = {
    status: 0,
    bytes: 0,
    events: 0,
    closed: false,
    response: null as IncomingMessage | null,
  };
  const ready = new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      state.status = res.statusCode ?? 0;
      state.response = res;
      res.on('data', (chunk: Buffer) => {
        state.bytes += chunk.length;
        state.events += chunk.toString().split('\nevent: event\n').length - 1;
      });
      res.on('close', () => {
        state.closed = true;
      });
      res.on('error', () => {});
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
  return { state, ready };
}

for (const kind of await testStores()) {
  describe(`live tail fairness [${kind.name}]`, () => {
    let h: Harness;
    let base: string;
    let acme: TestAccount;

    before(async () => {
      h = await startHarness(kind, { liveTailHeartbeatMs: 60_000 });
      base = await h.app.listen({ port: 0, host: '127.0.0.1' });
      acme = await h.account('ultra');
    });
    after(() => h.close());

    const store = (owner: TestAccount, pixelId: string, n: number, bytes: number, from = 0) =>
      h.store.events.insertEvents(
        Array.from({ length: n }, (_, i) => ({
          event: bareEvent({
            accountId: owner.account.id,
            pixelId,
            eventId: `big-${from + i}`,
            customData: { blob: 'x'.repeat(bytes) },
          }),
          emit: [],
        })),
      );

    it('closes a stream whose client stops reading once 1 MB waits unsent', async () => {
      const pixelId = await h.pixel(acme);
      const slow = rawStream(`${base}/v1/pixels/${pixelId}/events/stream`, acme.headers);
      const res = await slow.ready;
      assert.equal(slow.state.status, 200);
      res.pause();
      // 15 KB events, far more than the sockets' buffers hold (they absorb several MB first).
      const total = 1_200;
      for (let i = 0; i < total; i += 100) {
        await store(acme, pixelId, 100, 15_000, i);
        await new Promise((r) => setImmediate(r));
      }
      await new Promise((r) => setTimeout(r, 200));
      res.resume();
      await until(() => slow.state.closed, 10_000, 'the server to close the stream');
      console.log(
        `slow reader: ${total} events of 15 KB stored (${((total * 15_000) / 1e6).toFixed(0)} MB), ${slow.state.events} received before the server closed it (limit ${MAX_UNSENT_BYTES} bytes unsent)`,
      );
      assert.ok(slow.state.events < total, `received ${slow.state.events} of ${total}`);
      // A reader that keeps up is not affected.
      const fast = rawStream(`${base}/v1/pixels/${pixelId}/events/stream`, acme.headers);
      await fast.ready;
      await store(acme, pixelId, 100, 15_000, total);
      await until(() => fast.state.events === 100, 10_000, 'a reading client to get every event');
      assert.equal(fast.state.closed, false);
      fast.state.response?.destroy();
    });

    it(`serves every stream of a pixel with one read per commit`, async () => {
      const pixelId = await h.pixel(acme);
      const feed = h.store.feed;
      const original = feed.eventsBySeq;
      let reads = 0;
      feed.eventsBySeq = (...args) => {
        reads++;
        return original.apply(feed, args);
      };
      try {
        const streams = Array.from({ length: 5 }, () =>
          rawStream(`${base}/v1/pixels/${pixelId}/events/stream`, acme.headers),
        );
        await Promise.all(streams.map((s) => s.ready));
        for (let i = 0; i < 3; i++) await store(acme, pixelId, 1, 10, 100 + i);
        await until(
          () => streams.every((s) => s.state.events === 3),
          10_000,
          'every stream to get the 3 events',
        );
        console.log(`5 streams, 3 commits: ${reads} reads of the events`);
        assert.equal(reads, 3);
        for (const s of streams) s.state.response?.destroy();
      } finally {
        feed.eventsBySeq = original;
      }
    });

    it(`holds at most ${STREAMS_PER_ACCOUNT} open streams an account: the next is 429 with retry_after`, async () => {
      const owner = await h.account('ultra');
      const other = await h.account('ultra');
      const pixelId = await h.pixel(owner);
      const url = `${base}/v1/pixels/${pixelId}/events/stream`;
      const open = Array.from({ length: STREAMS_PER_ACCOUNT }, () => rawStream(url, owner.headers));
      await Promise.all(open.map((s) => s.ready));
      assert.ok(open.every((s) => s.state.status === 200));
      const refused = await fetch(url, { headers: owner.headers });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.deepEqual(await refused.json(), {
        error: 'Rate limit exceeded',
        message: `At most ${STREAMS_PER_ACCOUNT} live-tail streams may be open at once for an account; close one first.`,
        retry_after: 5,
      });
      // Another account is not affected.
      const theirs = rawStream(
        `${base}/v1/pixels/${await h.pixel(other)}/events/stream`,
        other.headers,
      );
      await theirs.ready;
      assert.equal(theirs.state.status, 200);
      theirs.state.response?.destroy();
      // Closing one frees its slot.
      open[0]?.state.response?.destroy();
      await until(() => open[0]?.state.closed === true, 2_000, 'the close');
      await new Promise((r) => setTimeout(r, 100));
      const again = rawStream(url, owner.headers);
      await again.ready;
      assert.equal(again.state.status, 200);
      for (const s of [...open, again]) s.state.response?.destroy();
    });

    it('ends a stream within 1 s of its key being revoked', async () => {
      const pixelId = await h.pixel(acme);
      const created = await h.request(acme, {
        method: 'POST',
        url: '/v1/keys',
        payload: { name: 'tail' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const { id, key } = created.json();
      const s = rawStream(`${base}/v1/pixels/${pixelId}/events/stream`, {
        authorization: `Bearer ${key}`,
      });
      await s.ready;
      assert.equal(s.state.status, 200);
      const revoked = await h.request(acme, { method: 'DELETE', url: `/v1/keys/${id}` });
      assert.equal(revoked.statusCode, 204);
      const at = Date.now();
      await until(() => s.state.closed, 1_000, 'the stream to end');
      console.log(`stream ended ${Date.now() - at} ms after its key was revoked`);
    });

    it('ends a dashboard stream within 1 s of its session being signed out', async () => {
      const pixelId = await h.pixel(acme);
      const signIn = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { ...FORM, ...SAME_ORIGIN },
        payload: new URLSearchParams({ api_key: acme.apiKey }).toString(),
      });
      const cookie = String(signIn.headers['set-cookie'] ?? '').split(';')[0] ?? '';
      assert.match(cookie, /^tw_session=./);
      const s = rawStream(`${base}/dashboard/pixels/${pixelId}/stream`, { cookie });
      await s.ready;
      assert.equal(s.state.status, 200);
      const out = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-out',
        headers: { ...SAME_ORIGIN, cookie },
      });
      assert.equal(out.statusCode, 303);
      const at = Date.now();
      await until(() => s.state.closed, 1_000, 'the stream to end');
      console.log(`dashboard stream ended ${Date.now() - at} ms after sign-out`);
    });
  });
}

const redis = await testRedis();
const [firstKind] = await testStores();
describe('live tail streams counted in Redis across instances', { skip: !redis }, () => {
  if (!redis || !firstKind) return;
  const kind = firstKind;
  let h: Harness;
  let second: Awaited<ReturnType<typeof buildApp>> | undefined;
  // The second instance's own connection, as a second process would have.
  const secondRedis = redis.duplicate();
  after(async () => {
    await second?.close();
    await h?.close();
    secondRedis.disconnect();
    redis.disconnect();
  });

  it(`admits ${STREAMS_PER_ACCOUNT} streams of an account over two instances, not more`, async () => {
    h = await startHarness(kind, {
      streamSlots: new RedisStreamSlots(redis, () => {}),
      liveTailHeartbeatMs: 60_000,
    });
    // The second instance: its own app (its own streams, its own process state) on the same
    // database and the same Redis.
    second = await buildApp({
      store: h.store,
      clock: h.clock,
      config: { trustProxy: false, webhookAllowPrivate: true, webhookAllowHttp: true },
      logger: testLogger(),
      rateLimiter: null,
      streamSlots: new RedisStreamSlots(secondRedis, () => {}),
    });
    const urls = [
      await h.app.listen({ port: 0, host: '127.0.0.1' }),
      await second.listen({ port: 0, host: '127.0.0.1' }),
    ];
    const owner = await h.account('ultra');
    const pixelId = await h.pixel(owner);
    const key = `trackway:live-tail:${owner.account.id}`;
    // Half on each instance.
    const streams = Array.from({ length: STREAMS_PER_ACCOUNT }, (_, i) =>
      rawStream(`${urls[i % 2]}/v1/pixels/${pixelId}/events/stream`, owner.headers),
    );
    await Promise.all(streams.map((s) => s.ready));
    assert.ok(streams.every((s) => s.state.status === 200));
    assert.equal(await redis.zcard(key), STREAMS_PER_ACCOUNT);
    for (const url of urls) {
      const refused = await fetch(`${url}/v1/pixels/${pixelId}/events/stream`, {
        headers: owner.headers,
      });
      assert.equal(refused.status, 429);
      assert.equal(((await refused.json()) as { retry_after: number }).retry_after, 5);
    }
    for (const s of streams) s.state.response?.destroy();
    await until(() => streams.every((s) => s.state.closed), 2_000, 'the streams to close');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await redis.zcard(key), 0);
  });
});
