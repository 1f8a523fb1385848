/**
 * Any storage outage answers 503 on every route, never 500 (contract §21, issue 30 item 12).
 * Every operation of the app's own OpenAPI document is called while its database is away, so
 * a route added later is covered without touching this file: its request body is the example
 * its schema documents (a route whose example is not a valid request fails here, by name).
 *
 * - PostgreSQL: the store connects through a TCP proxy that is then cut (every connection
 *   dropped, new ones refused), as in test/db-outage.faults.test.ts but in process.
 * - SQLite: the store's database handle is closed under the running app.
 *
 * The dashboard's pages, as its own navigation links them, answer 503 too (an HTML page).
 *
 * The key and pixel lookups are cached (for a second of the test's clock, which does not move),
 * so each request gets past authentication to its own port: the one that fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../src/domain/ports/store.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import {
  dropSchema,
  freshSchemaName,
  type Harness,
  postgresUrl,
  type StoreKind,
  startHarness,
  type TestAccount,
  testStores,
} from './harness.ts';
import { startProxy, type TcpProxy } from './tcp-proxy.ts';

// biome-ignore lint/suspicious/noExplicitAny: a test walking a JSON document reads it untyped
type Json = Record<string, any>;

interface Outage {
  kind: StoreKind;
  cut(store: Store): void;
  end(): Promise<void>;
}

/** PostgreSQL behind a proxy the test cuts. */
async function postgresOutage(): Promise<Outage> {
  const schema = freshSchemaName();
  const direct = new URL(postgresUrl(schema));
  let proxy: TcpProxy | null = null;
  return {
    kind: {
      name: 'postgres',
      async open(commits) {
        proxy = await startProxy(direct);
        const viaProxy = new URL(direct);
        viaProxy.host = `127.0.0.1:${proxy.port}`;
        const store = await PostgresStore.open({
          url: viaProxy.toString(),
          poolSize: 4,
          ...(commits && { commits }),
        });
        await store.migrate();
        return store;
      },
    },
    cut: () => proxy?.cut(),
    async end() {
      await proxy?.close();
      await dropSchema(schema);
    },
  };
}

/** SQLite whose database handle is closed under the app. */
function sqliteOutage(): Outage {
  const base = { name: 'sqlite' };
  return {
    kind: {
      ...base,
      async open(commits) {
        const { tempDir } = await import('./harness.ts');
        const dir = tempDir('trackway-outage-');
        const store = SqliteStore.open(`${dir.path}/trackway.db`, commits ? { commits } : {});
        const close = store.close.bind(store);
        store.close = async () => {
          await close();
          dir.remove();
        };
        return store;
      },
    },
    cut(store) {
      (store as SqliteStore).db.close();
    },
    async end() {},
  };
}

const outages = (await testStores()).map((k) => k.name);

for (const name of outages) {
  describe(`every route during a storage outage [${name}]`, () => {
    let outage: Outage;
    let h: Harness;
    let owner: TestAccount;
    const ids: Record<string, string> = {};
    let cookie = '';
    let dashboardPages: string[] = [];

    before(async () => {
      outage = name === 'postgres' ? await postgresOutage() : sqliteOutage();
      h = await startHarness(outage.kind);
      owner = await h.account('enterprise');
      ids['pixel_id'] = await h.pixel(owner);
      const hook = await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'http://127.0.0.1:9/hook' },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      ids['webhook_id'] = hook.json().id;
      const tracked = await h.track(owner, {
        pixel_id: ids['pixel_id'],
        event_name: 'Lead',
        event_id: 'outage-1',
      });
      assert.equal(tracked.statusCode, 200, tracked.body);
      ids['event_id'] = 'outage-1';
      const deliveries = await h.request(owner, {
        method: 'GET',
        url: `/v1/webhooks/${ids['webhook_id']}/deliveries`,
      });
      assert.equal(deliveries.statusCode, 200, deliveries.body);
      // Delivery attempts are listed once made (no worker runs here): any well-formed id
      // reaches the store, which is what is tested.
      ids['message_id'] = deliveries.json().deliveries[0]?.message_id ?? 'msg_00000000000000000000';
      const destination = await h.request(owner, {
        method: 'POST',
        url: `/v1/pixels/${ids['pixel_id']}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: '123456789012345', access_token: 'EAABoutage' },
        },
      });
      assert.equal(destination.statusCode, 201, destination.body);
      ids['destination_id'] = destination.json().id;
      const key = await h.request(owner, {
        method: 'POST',
        url: '/v1/keys',
        payload: { name: 'spare' },
      });
      assert.equal(key.statusCode, 201, key.body);
      ids['key_id'] = key.json().id;
      // The browser route (POST /v1/collect) is asked as a browser asks it: the pixel's
      // publishable key, from the pixel's own site (shop.example.com, the harness's default).
      const pixel = await h.request(owner, { method: 'GET', url: `/v1/pixels/${ids['pixel_id']}` });
      ids['publishable_key'] = pixel.json().publishable_key;
      const signedIn = await h.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
        },
        payload: new URLSearchParams({ api_key: owner.apiKey }).toString(),
      });
      cookie = String(signedIn.headers['set-cookie'] ?? '').split(';')[0]!;
      assert.match(cookie, /=/, signedIn.body);
      // The dashboard's pages as its own navigation links them (a new page is linked there).
      const pages = new Set<string>(['/dashboard']);
      for (const start of ['/dashboard', `/dashboard/destinations?pixel_id=${ids['pixel_id']}`]) {
        const page = await h.app.inject({ method: 'GET', url: start, headers: { cookie } });
        assert.equal(page.statusCode, 200, `${start}: ${page.body.slice(0, 200)}`);
        for (const [, href] of page.body.matchAll(/href="(\/dashboard[^"#]*)"/g)) {
          if (!/\/assets\/|sign-out/.test(href!)) pages.add(href!.replaceAll('&amp;', '&'));
        }
      }
      dashboardPages = [...pages];
    });
    after(async () => {
      await h?.close();
      await outage?.end();
    });

    /** The documented example body, aimed at this test's own pixel and a loopback receiver. */
    const bodyOf = (operation: Json): unknown => {
      const media = operation['requestBody']?.content?.['application/json'];
      if (!media) return undefined;
      const example =
        media.example ?? (Object.values(media.examples ?? {})[0] as Json | undefined)?.value;
      assert.ok(example !== undefined, `${operation['operationId']}: no example body`);
      return JSON.parse(JSON.stringify(example), (key, value) => {
        if (key === 'pixel_id' && typeof value === 'string' && value.startsWith('px_')) {
          return ids['pixel_id'];
        }
        if (key === 'key' && typeof value === 'string' && value.startsWith('tw_pub_')) {
          return ids['publishable_key'];
        }
        if (key === 'url' && typeof value === 'string' && /hooks?|webhook/.test(value)) {
          return 'http://127.0.0.1:9/hook';
        }
        return value;
      });
    };

    it('answers 503 on every route of the API ({error, message}) and the dashboard, never 500', async () => {
      const document = (await h.request(null, { method: 'GET', url: '/v1/openapi.json' })).json();
      const operations: Array<{ method: string; path: string; operation: Json }> = [];
      for (const [path, item] of Object.entries(document['paths'] as Json)) {
        for (const [method, operation] of Object.entries(item as Json)) {
          operations.push({ method: method.toUpperCase(), path, operation });
        }
      }
      assert.ok(operations.length >= 30, `${operations.length} operations documented`);

      outage.cut(h.adapter);
      const answers: string[] = [];
      const wrong: string[] = [];
      for (const { method, path, operation } of operations) {
        const url = path.replace(/\{(\w+)\}/g, (_, param: string) => {
          assert.ok(ids[param], `no id for {${param}} (${method} ${path})`);
          return encodeURIComponent(ids[param]!);
        });
        const payload = bodyOf(operation);
        const res = await Promise.race([
          h.request(owner, {
            method: method as 'GET',
            url,
            ...(payload !== undefined && { payload: payload as Json }),
            ...(path === '/v1/collect' && { headers: { origin: 'https://shop.example.com' } }),
          }),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error(`${method} ${path} did not answer in 10 s`)), 10_000),
          ),
        ]);
        const route = `${method} ${path}`;
        answers.push(`${route} ${res.statusCode}`);
        // Liveness does not touch the database: it must stay up (a restart would not help).
        const expected = path === '/healthz' ? 200 : 503;
        if (res.statusCode !== expected) {
          wrong.push(`${route} → ${res.statusCode} ${res.body.slice(0, 200)}`);
          continue;
        }
        if (expected === 503) {
          const body = res.json();
          if (body.error !== 'Service unavailable' || typeof body.message !== 'string') {
            wrong.push(`${route} → 503 with ${res.body.slice(0, 200)}`);
          }
        }
      }
      // The dashboard's pages: an error page with 503, never a 500.
      for (const page of dashboardPages) {
        const res = await h.app.inject({ method: 'GET', url: page, headers: { cookie } });
        answers.push(`GET ${page} ${res.statusCode}`);
        if (res.statusCode !== 503) {
          wrong.push(`GET ${page} → ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
      assert.deepEqual(
        wrong,
        [],
        `routes not answering 503 during the outage:\n${wrong.join('\n')}`,
      );
      console.log(
        `storage outage [${name}]: ${operations.length} API routes called, ${operations.length - 1} × 503 Service unavailable, /healthz 200; ${dashboardPages.length} dashboard pages, all 503; 0 × 500`,
      );
    });
  });
}
