/**
 * The fault cases of the first platforms, over every stand-in that has fault switches
 * (`StandIn.faults`, test/platforms/stand-ins.ts), so a platform added with them runs here
 * without a test of its own:
 * - in process, on both stores: the platform down then up, one poisoned event among eight
 *   (only it fails), refused credentials (a revoked OAuth grant: the destination is suspended,
 *   its events kept, and new credentials resume it), throttling, and the platform hanging while
 *   another platform's destination on the same pixel delivers;
 * - with real processes (SQLite; PostgreSQL with Redis): SIGKILL while the stand-ins hold the
 *   answer to a batch they kept, restart: every acknowledged event reaches every platform, the
 *   held ones resent with their event ids and deduplicated.
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
import { systemClock } from '../src/domain/ports.ts';
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
import {
  baseUrlsFor,
  STAND_INS,
  type StandIn,
  type StandInFaults,
  tokenUrlsOf,
} from './platforms/stand-ins.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';
import { TEST_REDIS_URL } from './redis.ts';

/** The stand-ins with fault switches. */
const standIns: Partial<Record<Platform, StandIn>> = {};
for (const type of PLATFORMS) {
  const standIn = await STAND_INS[type]();
  if (standIn.faults) standIns[type] = standIn;
  else await standIn.close();
}
const TYPES = Object.keys(standIns) as Platform[];
const faultsOf = (type: Platform) => standIns[type]!.faults as StandInFaults;
after(async () => {
  for (const type of TYPES) await standIns[type]!.close();
});

const waitUntil = async (check: () => boolean | Promise<boolean>, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(25);
  }
};

const urls = () =>
  baseUrlsFor(
    Object.fromEntries(TYPES.map((t) => [t, standIns[t]!.baseUrl])),
    standIns[TYPES[0]!]!.baseUrl,
  );

/** A website event every stand-in with faults takes (an email; a click id for LinkedIn). */
const event = (pixel: string, eventId: string) => ({
  pixel_id: pixel,
  event_name: 'Lead',
  event_id: eventId,
  url: `https://shop.example/lead?li_fat_id=fat-${eventId}&gclid=g-${eventId}`,
  user_data: {
    email: `${eventId}@example.com`,
    client_ip_address: '203.0.113.9',
    client_user_agent: 'Mozilla/5.0 (faults)',
  },
});

for (const kind of await testStores()) {
  describe(`forwarding faults at every stand-in with switches [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let sender: PlatformSender;
    let tokens: AccessTokens;
    let worker: ForwardingWorker;

    before(async () => {
      const tokenUrls = tokenUrlsOf(standIns);
      h = await startHarness(kind, { platformUrls: urls(), tokenUrls });
      acme = await h.account('enterprise');
      sender = createPlatformSender({ timeoutMs: 1_000 });
      tokens = createAccessTokens({ urls: tokenUrls });
      worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: Array(40).fill(0.1),
        baseUrls: urls(),
        tokens,
        pollMs: 50,
      });
      worker.start();
    });
    after(async () => {
      await worker.stop();
      await sender.close();
      await tokens.close();
      await h.close();
    });

    const destination = async (pixel: string, type: Platform) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: { type, config: standIns[type]!.config },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const track = async (pixel: string, ids: string[]) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: { events: ids.map((id) => event(pixel, id)) },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const status = async (pixel: string, type: Platform, id: string) =>
      (await h.store.forwarding.eventForwarding(acme.account.id, pixel, [id], true))
        .get(id)
        ?.find((f) => f.platform === type);
    const all = async (pixel: string, type: Platform, ids: string[], wanted: string) => {
      for (const id of ids) if ((await status(pixel, type, id))?.status !== wanted) return false;
      return true;
    };
    const sentTo = (type: Platform, id: string) =>
      faultsOf(type).server.requests.some((r) => faultsOf(type).idsIn(r).includes(id));
    const kept = (type: Platform, id: string) =>
      standIns[type]!.events.some((e) => standIns[type]!.personOf(e) === id);

    for (const type of TYPES) {
      it(`${type}: down, then up: the events wait and are delivered`, async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, type);
        const ids = [1, 2, 3].map((i) => `${kind.name}-${type}-down-${i}`);
        faultsOf(type).server.mode = 'down';
        try {
          await track(pixel, ids);
          // Down whole: its token endpoint too, for a platform with one (then nothing carrying
          // the events is sent, and the attempt records the token endpoint's answer).
          await waitUntil(async () => (await status(pixel, type, ids[0]!))?.lastError != null);
          assert.equal((await status(pixel, type, ids[0]!))?.status, 'pending');
        } finally {
          faultsOf(type).server.mode = 'normal';
        }
        await waitUntil(() => all(pixel, type, ids, 'forwarded'));
        for (const id of ids) assert.ok(kept(type, id), id);
      });

      it(`${type}: one poisoned event among eight fails alone; the seven others are delivered`, async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, type);
        const ids = Array.from({ length: 8 }, (_, i) => `${kind.name}-${type}-poison-${i}`);
        faultsOf(type).poison(ids[3]!);
        try {
          await track(pixel, ids);
          await waitUntil(async () => (await status(pixel, type, ids[3]!))?.status === 'failed');
          const good = ids.filter((_, i) => i !== 3);
          await waitUntil(() => all(pixel, type, good, 'forwarded'));
          assert.ok(!kept(type, ids[3]!));
        } finally {
          faultsOf(type).poison(null);
        }
      });

      it(`${type}: refused credentials suspend the destination and keep its events; new credentials resume it`, async () => {
        const pixel = await h.pixel(acme);
        const id = await destination(pixel, type);
        const ids = [`${kind.name}-${type}-auth-1`, `${kind.name}-${type}-auth-2`];
        const read = async () =>
          (
            await h.request(acme, {
              method: 'GET',
              url: `/v1/pixels/${pixel}/destinations/${id}`,
            })
          ).json();
        faultsOf(type).refuseCredentials(true);
        try {
          await track(pixel, ids);
          await waitUntil(async () => (await read()).state === 'suspended');
          assert.match((await read()).last_error, /refused/);
          assert.ok(await all(pixel, type, ids, 'pending'));
        } finally {
          faultsOf(type).refuseCredentials(false);
        }
        const config = standIns[type]!.config;
        const credential = PLATFORM_MODULES[type].config.credentials.find(
          (f) => config[f] !== undefined,
        )!;
        const patched = await h.request(acme, {
          method: 'PATCH',
          url: `/v1/pixels/${pixel}/destinations/${id}`,
          payload: { config: { [credential]: config[credential] } },
        });
        assert.equal(patched.json().state, 'active', patched.body);
        worker.wake();
        await waitUntil(() => all(pixel, type, ids, 'forwarded'));
      });

      it(`${type}: throttled, the events wait and are delivered once it lets them through`, async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, type);
        const ids = [`${kind.name}-${type}-429-1`];
        faultsOf(type).server.mode = 'throttled';
        try {
          await track(pixel, ids);
          await waitUntil(() => sentTo(type, ids[0]!));
          await waitUntil(async () => (await status(pixel, type, ids[0]!))?.lastError != null);
          assert.equal((await status(pixel, type, ids[0]!))?.status, 'pending');
        } finally {
          faultsOf(type).server.mode = 'normal';
        }
        await waitUntil(() => all(pixel, type, ids, 'forwarded'));
      });

      const other = TYPES.find((t) => t !== type);
      it(`${type}: hanging, while ${other ?? 'another platform'} on the same pixel delivers`, {
        skip: other === undefined,
      }, async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, type);
        await destination(pixel, other!);
        const ids = [`${kind.name}-${type}-hang-1`, `${kind.name}-${type}-hang-2`];
        const server = faultsOf(type).server;
        // Its events hang; its token endpoint (the same server) still answers.
        server.hangIf = (r) => faultsOf(type).idsIn(r).length > 0;
        try {
          await track(pixel, ids);
          await waitUntil(() => all(pixel, other!, ids, 'forwarded'));
          assert.ok(await all(pixel, type, ids, 'pending'));
        } finally {
          delete server.hangIf;
          server.release();
        }
        await waitUntil(() => all(pixel, type, ids, 'forwarded'));
      });
    }
  });
}

const dir = tempDir();
const schemas: string[] = [];
after(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
  dir.remove();
});
const STORES = [
  { name: 'sqlite', env: async () => ({ DATABASE_URL: `sqlite:${join(dir.path, 'held.db')}` }) },
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

describe('a crash while the platforms hold the answer (real processes)', {
  concurrency: false,
}, () => {
  for (const store of STORES) {
    it(`[${store.name}] SIGKILL with batches held at ${TYPES.join(', ')}, restart: every acknowledged event arrives; the held ones are resent and deduplicated`, async () => {
      const env: Record<string, string> = {
        ...(await store.env()),
        TRACKWAY_FORWARD_RETRY_SCHEDULE: Array(30).fill('1').join(','),
      };
      for (const type of TYPES) {
        const module = PLATFORM_MODULES[type];
        env[module.baseUrl.env] = standIns[type]!.baseUrl;
        if (module.auth) env[module.auth.tokenUrl.env] = standIns[type]!.tokenUrl!;
      }
      const made = await runCli(
        ['accounts', 'create', '--name', 'Faults', '--plan', 'enterprise', '--json'],
        env,
      );
      assert.equal(made.code, 0, made.stderr);
      const { api_key: key } = JSON.parse(made.stdout) as { api_key: string };
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      let server: ServerProcess = await startServerProcess(env);
      try {
        const call = async (path: string, body: unknown) => {
          const res = await fetch(`${server.url}${path}`, {
            method: 'POST',
            headers,
            body: JSON.stringify(body),
          });
          return { status: res.status, json: (await res.json()) as Record<string, unknown> };
        };
        const pixel = String(
          (await call('/v1/pixels', { name: 'Shop', domain: 'shop.example' })).json['id'],
        );
        for (const type of TYPES) {
          const dst = await call(`/v1/pixels/${pixel}/destinations`, {
            type,
            config: standIns[type]!.config,
          });
          assert.equal(dst.status, 201, JSON.stringify(dst.json));
        }
        const acknowledged: string[] = [];
        let running = true;
        const url = server.url;
        const writers = Array.from({ length: 10 }, async (_, w) => {
          for (let i = 0; running; i++) {
            const id = `${store.name}-w${w}-${i}`;
            try {
              const res = await fetch(`${url}/v1/track`, {
                method: 'POST',
                headers,
                body: JSON.stringify(event(pixel, id)),
              });
              if (res.status === 200) acknowledged.push(id);
              await res.arrayBuffer();
            } catch {
              return;
            }
          }
        });
        for (const until = Date.now() + 30_000; acknowledged.length < 50; await sleep(20)) {
          assert.ok(Date.now() < until, `only ${acknowledged.length} acknowledged in 30 s`);
        }
        const carries = (type: Platform) => (r: Parameters<StandInFaults['idsIn']>[0]) =>
          faultsOf(type)
            .idsIn(r)
            .some((id) => id.startsWith(`${store.name}-`));
        for (const type of TYPES) faultsOf(type).server.holdIf = carries(type);
        for (const type of TYPES) {
          const s = faultsOf(type).server;
          await s.waitFor(() => s.held.some(carries(type)), 15_000);
          assert.ok(s.inFlight() > 0, `${type}: the held request is still open`);
        }
        assert.equal(await server.stop('SIGKILL'), null);
        const held: Partial<Record<Platform, string[]>> = {};
        for (const type of TYPES) {
          const s = faultsOf(type).server;
          delete s.holdIf;
          held[type] = s.held.filter(carries(type)).flatMap((r) => faultsOf(type).idsIn(r));
          s.held.length = 0;
        }
        running = false;
        await Promise.all(writers);
        const duplicatesBefore = Object.fromEntries(
          TYPES.map((t) => [t, standIns[t]!.duplicates()]),
        );
        server = await startServerProcess(env);
        const sends = (type: Platform, id: string) =>
          faultsOf(type).server.requests.filter((r) => faultsOf(type).idsIn(r).includes(id)).length;
        const keptIds = (type: Platform) =>
          new Set(standIns[type]!.events.map((e) => standIns[type]!.personOf(e)));
        await waitUntil(() => {
          return TYPES.every((type) => {
            const at = keptIds(type);
            return (
              acknowledged.every((id) => at.has(id)) &&
              held[type]!.every((id) => sends(type, id) >= 2)
            );
          });
        }, 60_000);
        for (const type of TYPES) {
          assert.ok(held[type]!.length > 0, type);
          const resent = standIns[type]!.duplicates() - duplicatesBefore[type]!;
          assert.ok(resent >= held[type]!.length, `${type}: ${resent} deduplicated`);
          const once = standIns[type]!.events.filter((e) =>
            held[type]!.includes(standIns[type]!.personOf(e)),
          ).length;
          assert.equal(once, held[type]!.length, `${type}: each held event kept once`);
        }
        console.log(
          `forwarding crash [${store.name}, held]: ${acknowledged.length} acknowledged, all at ${TYPES.join(', ')}; held and resent: ${TYPES.map((t) => `${t} ${held[t]!.length}`).join(', ')}`,
        );
      } finally {
        await server.stop('SIGKILL');
      }
    });
  }
});
