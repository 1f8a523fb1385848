/**
 * Forwarding loses nothing acknowledged (issues 17, 18 and 32), on both stores (SQLite;
 * PostgreSQL with Redis), for every platform of the registry, each pointed at its local
 * stand-in (test/platforms/stand-ins.ts; TRACKWAY_*_API_URL). A platform added to the registry
 * runs here as soon as its stand-in is listed.
 *
 * With real processes: 20 writers track events to a pixel with one destination per platform;
 * the API process is SIGKILLed mid-forwarding and restarted. Every event that got a 200
 * reaches every platform: its forwarding jobs committed with the event, and a batch cut short
 * by the crash comes back when its lease (30 s) ends. Two ways to kill:
 * - **held**: the stand-ins take a batch (they keep its events, as the platform would) and hold
 *   the answer back; the kill lands while those requests are still connected, i.e. between
 *   "the platform has the events" and "we recorded it". The restarted process must resend them
 *   with the same event id: the platforms that keep one deduplicate by it (their stand-ins
 *   count the duplicates); GA4 has no event id and keeps the resent events again (at least
 *   once: see docs/decisions.md). This proves resends happen, rather than hoping a random kill
 *   hits a batch in flight.
 * - **random**: kill after a random delay while events flow; whatever was in flight or not.
 *
 * In process, for every platform: down then up, one poisoned event among 50, a refused token,
 * throttling, and the platform hanging while another platform's destination delivers (the
 * last suite of this file).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AccessTokens, createAccessTokens } from '../src/delivery/access-tokens.ts';
import { ForwardingWorker } from '../src/delivery/forwarding-worker.ts';
import { createPlatformSender, type PlatformSender } from '../src/delivery/platform-sender.ts';
import {
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
} from '../src/domain/forwarding/platforms/registry.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import {
  dropSchema,
  freshSchemaName,
  type Harness,
  postgresAvailable,
  postgresUrl,
  startHarness,
  type TestAccount,
  tempDir,
  testStores,
} from './harness.ts';
import { testLogger } from './log-capture.ts';
import { STAND_INS, type StandIn, tokenUrlsOf } from './platforms/stand-ins.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';
import { TEST_REDIS_URL } from './redis.ts';

const WRITERS = 20;
/** Longer than the 30 s lease after which a batch cut short comes back. */
const ARRIVAL_TIMEOUT_MS = 60_000;
/**
 * Four scenarios side by side, each with a stand-in per platform, on a shared machine: a
 * restarted server may take its time to listen while it starts sending the backlog.
 */
const START_TIMEOUT_MS = 60_000;
const dir = tempDir();
const schemas: string[] = [];
const STORES = [
  {
    name: 'sqlite',
    env: async (tag: string) => ({
      DATABASE_URL: `sqlite:${join(dir.path, `${tag}-${Date.now()}.db`)}`,
    }),
  },
  ...((await postgresAvailable())
    ? [
        {
          name: 'postgres+redis',
          env: async () => {
            const schema = freshSchemaName();
            schemas.push(schema);
            return { DATABASE_URL: postgresUrl(schema), REDIS_URL: TEST_REDIS_URL };
          },
        },
      ]
    : []),
];

after(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
  dir.remove();
});

const PAGE = 'https://shop.example/checkout/';

type StandIns = Record<Platform, StandIn>;

async function startStandIns(): Promise<StandIns> {
  const standIns = {} as StandIns;
  for (const type of PLATFORMS) standIns[type] = await STAND_INS[type]();
  return standIns;
}

/** Event tags each platform kept, with how many times (GA4 keeps a resend again). */
function kept(standIn: StandIn): Map<string, number> {
  const map = new Map<string, number>();
  for (const event of standIn.events) {
    const tag = standIn.tagOf(event);
    map.set(tag, (map.get(tag) ?? 0) + 1);
  }
  return map;
}

/** How many requests carried each event to the platform (a resend makes it 2 or more). */
function sends(standIn: StandIn): Map<string, number> {
  const map = new Map<string, number>();
  for (const request of standIn.server.requests) {
    for (const tag of standIn.tagsIn(request)) map.set(tag, (map.get(tag) ?? 0) + 1);
  }
  return map;
}

async function crashScenario(store: (typeof STORES)[number], kill: 'held' | 'random') {
  const standIns = await startStandIns();
  const env = {
    ...(await store.env(kill)),
    ...Object.fromEntries(
      PLATFORMS.map((type) => [PLATFORM_MODULES[type].baseUrl.env, standIns[type].baseUrl]),
    ),
    // The token URLs of the platforms whose access token the service obtains (OAuth).
    ...Object.fromEntries(
      PLATFORMS.flatMap((type) => {
        const auth = PLATFORM_MODULES[type].auth;
        const url = standIns[type].tokenUrl;
        return auth && url ? [[auth.tokenUrl.env, url]] : [];
      }),
    ),
    TRACKWAY_FORWARD_RETRY_SCHEDULE: Array(30).fill('1').join(','),
  };
  const made = await runCli(
    ['accounts', 'create', '--name', 'Faults', '--plan', 'enterprise', '--json'],
    env,
  );
  assert.equal(made.code, 0, made.stderr);
  const { api_key: key } = JSON.parse(made.stdout) as { api_key: string };
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let server: ServerProcess = await startServerProcess(env, START_TIMEOUT_MS);
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const pixel = await call('POST', '/v1/pixels', { name: 'Shop', domain: 'shop.example' });
    const pixelId = String(pixel.json['id']);
    for (const type of PLATFORMS) {
      const dst = await call('POST', `/v1/pixels/${pixelId}/destinations`, {
        type,
        config: standIns[type].config,
      });
      assert.equal(dst.status, 201, JSON.stringify(dst.json));
    }

    const acknowledged: string[] = [];
    let running = true;
    const url = server.url;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; running; i++) {
        const eventId = `w${w}-${i}`;
        // What each platform needs beyond an email and a user agent (GA4 its client id), and
        // every platform's click ids.
        const extra = Object.assign(
          {},
          ...PLATFORMS.map((type) => standIns[type].userData(`${1000 + w}`)),
        ) as Record<string, string>;
        try {
          const res = await fetch(`${url}/v1/track`, {
            method: 'POST',
            headers,
            body: JSON.stringify({
              pixel_id: pixelId,
              event_name: 'Lead',
              event_id: eventId,
              // GA4 carries no event id: the page URL tells the events apart at its stand-in.
              url: `${PAGE}${eventId}`,
              user_data: {
                email: `w${w}-${i}@example.com`,
                client_user_agent: 'Mozilla/5.0 (test)',
                ...extra,
              },
            }),
          });
          if (res.status === 200) acknowledged.push(eventId);
          await res.arrayBuffer();
        } catch {
          return;
        }
      }
    });
    // Forwarding to every platform is under way, and a fair number of events acknowledged,
    // before anything is done to it.
    for (const until = Date.now() + 30_000; acknowledged.length < 100; await sleep(20)) {
      assert.ok(Date.now() < until, `only ${acknowledged.length} acknowledged in 30 s`);
    }
    for (const type of PLATFORMS) {
      const standIn = standIns[type];
      await standIn.server.waitFor(() => standIn.events.length > 0);
    }

    const heldIds = {} as Record<Platform, string[]>;
    if (kill === 'held') {
      for (const type of PLATFORMS) standIns[type].server.holdIf = () => true;
      for (const type of PLATFORMS) {
        const { server: platform } = standIns[type];
        await platform.waitFor(() => platform.held.length > 0, 15_000);
      }
      // Provably in flight: each platform has kept a batch whose sender is still waiting for
      // the answer, so no settlement can have recorded it.
      for (const type of PLATFORMS) {
        assert.ok(standIns[type].server.inFlight() > 0, `${type}: the held request is still open`);
      }
    } else {
      await sleep(Math.floor(Math.random() * 1_500));
    }
    assert.equal(await server.stop('SIGKILL'), null);
    for (const type of PLATFORMS) {
      const standIn = standIns[type];
      delete standIn.server.holdIf;
      heldIds[type] = standIn.server.held.flatMap((r) => standIn.tagsIn(r));
    }
    running = false;
    await Promise.all(writers);
    if (kill === 'held') {
      for (const type of PLATFORMS) assert.ok(heldIds[type].length > 0, type);
    }

    server = await startServerProcess(env, START_TIMEOUT_MS);
    const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
    const done = () =>
      PLATFORMS.every((type) => {
        const at = kept(standIns[type]);
        const sent = sends(standIns[type]);
        return (
          acknowledged.every((id) => at.has(id)) &&
          heldIds[type].every((id) => (sent.get(id) ?? 0) >= 2)
        );
      });
    while (!done()) {
      if (Date.now() > deadline) {
        const report = PLATFORMS.map((type) => {
          const at = kept(standIns[type]);
          const sent = sends(standIns[type]);
          const missing = acknowledged.filter((id) => !at.has(id)).length;
          const notResent = heldIds[type].filter((id) => (sent.get(id) ?? 0) < 2).length;
          return `${type}: ${missing} acknowledged missing, ${notResent} held not resent`;
        });
        assert.fail(report.join('; '));
      }
      await sleep(100);
    }

    const resent = {} as Record<Platform, number>;
    for (const type of PLATFORMS) {
      const standIn = standIns[type];
      const at = kept(standIn);
      resent[type] = standIn.keepsEventId
        ? standIn.duplicates()
        : [...at.values()].filter((n) => n > 1).length;
      if (kill !== 'held') continue;
      if (standIn.keepsEventId) {
        // The resend carried the same event id: the platform received it again and kept it once.
        assert.ok(resent[type] >= heldIds[type].length, `${type}: ${resent[type]} resent`);
        for (const id of heldIds[type]) assert.equal(at.get(id), 1, `${type} ${id}`);
      } else {
        // GA4 has no event id to deduplicate by: it kept the resent event twice.
        for (const id of heldIds[type]) assert.ok((at.get(id) ?? 0) >= 2, `${type} ${id}`);
      }
    }
    if (kill === 'held') {
      // And the restarted process recorded them as forwarded, on every destination.
      const sample = heldIds[PLATFORMS[0]!][0]!;
      const deadlineRecord = Date.now() + 15_000;
      let statuses: string[] = [];
      while (Date.now() < deadlineRecord) {
        const record = await call('GET', `/v1/pixels/${pixelId}/events/${sample}`);
        const forwarding = (record.json['forwarding'] ?? []) as Array<{ status: string }>;
        statuses = forwarding.map((f) => f.status);
        if (statuses.length === PLATFORMS.length && statuses.every((s) => s === 'forwarded')) {
          break;
        }
        await sleep(100);
      }
      assert.deepEqual(
        statuses,
        PLATFORMS.map(() => 'forwarded'),
      );
    }
    console.log(
      `forwarding crash [${store.name}, ${kill}]: ${acknowledged.length} acknowledged, all at ` +
        `${PLATFORMS.join(', ')}; held at the kill: ` +
        PLATFORMS.map((t) => `${t} ${heldIds[t].length}`).join(', ') +
        '; resent after the restart: ' +
        PLATFORMS.map(
          (t) => `${t} ${resent[t]} (${standIns[t].keepsEventId ? 'deduplicated' : 'kept twice'})`,
        ).join(', '),
    );
  } finally {
    await server.stop('SIGKILL');
    for (const type of PLATFORMS) await standIns[type].close();
  }
}

// The scenarios mostly wait for leases to end: run side by side, they keep the suite short.
describe('forwarding survives a crash (real processes)', { concurrency: true }, () => {
  for (const store of STORES) {
    it(`[${store.name}] SIGKILL while batches are held in flight, restart: every acknowledged event reaches every platform; the held ones are resent`, {
      timeout: 300_000,
    }, async () => {
      await crashScenario(store, 'held');
    });
    it(`[${store.name}] SIGKILL at a random moment, restart: every acknowledged event reaches every platform`, {
      timeout: 300_000,
    }, async () => {
      await crashScenario(store, 'random');
    });
  }
});

/**
 * The other faults, in process on both stores, for every platform of the registry (its stand-in
 * from stand-ins.ts): down then up, one poisoned event among 50, a refused token, throttling,
 * and the platform hanging while another platform's destination on the same pixel delivers.
 * A platform that cannot show a fault (GA4 refuses no single event and no token, and never
 * throttles) skips that case, saying why.
 */
const waitUntil = async (check: () => boolean | Promise<boolean>, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(20);
  }
};

for (const kind of await testStores()) {
  describe(`forwarding faults on every platform [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let sender: PlatformSender;
    let worker: ForwardingWorker;
    let standIns: StandIns;
    let tokens: AccessTokens;

    before(async () => {
      standIns = await startStandIns();
      const urls = Object.fromEntries(
        PLATFORMS.map((type) => [type, standIns[type].baseUrl]),
      ) as Record<Platform, string>;
      const tokenUrls = tokenUrlsOf(standIns);
      tokens = createAccessTokens({ urls: tokenUrls });
      h = await startHarness(kind, { platformUrls: urls, tokenUrls });
      acme = await h.account('enterprise');
      // Patient: a hanging platform's request stays open for the whole test.
      sender = createPlatformSender({ timeoutMs: 120_000 });
      worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: Array(40).fill(0.2),
        baseUrls: urls,
        tokens,
        pollMs: 50,
      });
      worker.start();
    });
    after(async () => {
      await worker.stop();
      await sender.close();
      await tokens.close();
      for (const type of PLATFORMS) await standIns[type].close();
      await h.close();
    });

    const destination = async (pixel: string, type: Platform) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: { type, config: standIns[type].config },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const track = async (pixel: string, prefix: string, n: number) => {
      const events = Array.from({ length: n }, (_, i) => ({
        pixel_id: pixel,
        event_name: 'Lead',
        event_id: `${prefix}-${i}`,
        url: `${PAGE}${prefix}-${i}`,
        user_data: {
          email: `${prefix}-${i}@example.com`,
          client_user_agent: 'Mozilla/5.0 (test)',
          ...Object.assign({}, ...PLATFORMS.map((t) => standIns[t].userData(`${2000 + i}`))),
        },
      }));
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: { events },
      });
      assert.equal(res.statusCode, 200, res.body);
      return events.map((e) => e.event_id);
    };
    const entry = async (pixel: string, eventId: string, type: Platform) => {
      const map = await h.store.forwarding.eventForwarding(acme.account.id, pixel, [eventId], true);
      return map.get(eventId)?.find((f) => f.platform === type);
    };
    const keptAt = (type: Platform, ids: string[]) => {
      const at = kept(standIns[type]);
      return ids.filter((id) => at.has(id)).length;
    };
    const state = async (pixel: string, dst: string) =>
      (
        await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixel}/destinations/${dst}` })
      ).json();
    const allForwarded = async (pixel: string, ids: string[], type: Platform) => {
      for (const id of ids) {
        await waitUntil(async () => (await entry(pixel, id, type))?.status === 'forwarded');
      }
    };

    for (const type of PLATFORMS) {
      it(`${type}: down (5xx), retried and pending, the destination failing; up again, everything delivered`, async () => {
        const standIn = standIns[type];
        const pixel = await h.pixel(acme);
        const dst = await destination(pixel, type);
        standIn.server.mode = 'down';
        let ids: string[];
        try {
          ids = await track(pixel, `${type}-down`, 5);
          await waitUntil(async () => ((await entry(pixel, ids[0]!, type))?.attempts ?? 0) >= 2);
          const waiting = await entry(pixel, ids[0]!, type);
          assert.equal(waiting!.status, 'pending');
          assert.equal((await state(pixel, dst)).state, 'failing');
          assert.equal(keptAt(type, ids), 0);
        } finally {
          standIn.server.mode = 'normal';
        }
        await waitUntil(() => keptAt(type, ids) === 5);
        await allForwarded(pixel, ids, type);
        await waitUntil(async () => (await state(pixel, dst)).state === 'active');
      });

      it(`${type}: one poisoned event among 50: 49 forwarded, that one failed with the platform's message`, async (t) => {
        const standIn = standIns[type];
        if (!standIn.poison) {
          t.skip(`${type} refuses no single event`);
          return;
        }
        const pixel = await h.pixel(acme);
        await destination(pixel, type);
        standIn.poison(`${type}-poison-37`);
        try {
          const ids = await track(pixel, `${type}-poison`, 50);
          await waitUntil(
            async () => (await entry(pixel, `${type}-poison-37`, type))?.status === 'failed',
          );
          const bad = await entry(pixel, `${type}-poison-37`, type);
          assert.match(bad!.lastError!, /poisoned by the test/);
          const good = ids.filter((id) => id !== `${type}-poison-37`);
          await waitUntil(() => keptAt(type, good) === 49);
          await allForwarded(pixel, good, type);
          assert.equal(keptAt(type, [`${type}-poison-37`]), 0);
        } finally {
          standIn.poison(null);
        }
      });

      it(`${type}: a refused token suspends the destination, nothing is sent meanwhile; resuming delivers everything`, async (t) => {
        const standIn = standIns[type];
        if (!standIn.modes.includes('expired')) {
          t.skip(`${type} refuses no token (a wrong one is taken and dropped)`);
          return;
        }
        const pixel = await h.pixel(acme);
        const dst = await destination(pixel, type);
        standIn.server.mode = 'expired';
        let ids: string[];
        try {
          ids = await track(pixel, `${type}-token`, 4);
          await waitUntil(async () => (await state(pixel, dst)).state === 'suspended');
          const before = standIn.server.requests.length;
          await sleep(300);
          assert.equal(standIn.server.requests.length, before, 'nothing sent while suspended');
          assert.equal((await entry(pixel, ids[0]!, type))!.status, 'pending');
        } finally {
          standIn.server.mode = 'normal';
        }
        const res = await h.request(acme, {
          method: 'PATCH',
          url: `/v1/pixels/${pixel}/destinations/${dst}`,
          payload: { enabled: true },
        });
        assert.equal(res.json().state, 'active', res.body);
        await waitUntil(() => keptAt(type, ids) === 4);
        await allForwarded(pixel, ids, type);
      });

      it(`${type}: throttling (429) is retried later, not failed`, async (t) => {
        const standIn = standIns[type];
        if (!standIn.modes.includes('throttled')) {
          t.skip(`${type} documents no throttling answer`);
          return;
        }
        const pixel = await h.pixel(acme);
        const dst = await destination(pixel, type);
        standIn.server.mode = 'throttled';
        let ids: string[];
        try {
          ids = await track(pixel, `${type}-slow`, 5);
          await waitUntil(async () => ((await entry(pixel, ids[0]!, type))?.attempts ?? 0) >= 2);
          assert.equal((await entry(pixel, ids[0]!, type))!.status, 'pending');
          assert.equal((await state(pixel, dst)).state, 'failing');
        } finally {
          standIn.server.mode = 'normal';
        }
        await waitUntil(() => keptAt(type, ids) === 5);
        await allForwarded(pixel, ids, type);
      });

      it(`${type}: hanging does not delay another platform's destination on the same pixel`, async () => {
        const standIn = standIns[type];
        const other = PLATFORMS.find((p) => p !== type)!;
        const pixel = await h.pixel(acme);
        await destination(pixel, type);
        await destination(pixel, other);
        standIn.server.mode = 'hang';
        try {
          const first = await track(pixel, `${type}-hang`, 5);
          await waitUntil(() => standIn.server.inFlight() > 0);
          await waitUntil(() => keptAt(other, first) === 5);
          const second = await track(pixel, `${type}-hang2`, 5);
          await waitUntil(() => keptAt(other, second) === 5);
          await allForwarded(pixel, second, other);
          assert.ok(standIn.server.inFlight() > 0, `${type} still hangs`);
          assert.equal(keptAt(type, [...first, ...second]), 0);
        } finally {
          standIn.server.mode = 'normal';
          standIn.server.release();
        }
      });
    }
  });
}
