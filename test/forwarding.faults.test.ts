/**
 * Forwarding loses nothing acknowledged (issue 17), on both stores, with real processes: 20
 * writers track events to a pixel with a Meta destination pointed at the local Meta server
 * (TRACKWAY_META_API_URL); the API process is SIGKILLed mid-forwarding and restarted. Every
 * event that got a 200 reaches the platform: its forwarding job committed with the event, and
 * a batch cut short by the crash comes back when its lease ends (a resend carries the same
 * event_id, which the platform deduplicates).
 *
 * The platform-down, poisoned-batch, expired-token and hanging-destination cases run in
 * process against the same local Meta server: src/delivery/forwarding-worker.test.ts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dropSchema, freshSchemaName, postgresUrl, tempDir } from './harness.ts';
import { type MetaServer, startMetaServer } from './platforms/meta-server.ts';
import { runCli, startServerProcess } from './process.ts';

const WRITERS = 20;
const dir = tempDir();
const schemas: string[] = [];
const STORES = [
  {
    name: 'sqlite',
    env: async () => ({ DATABASE_URL: `sqlite:${join(dir.path, `${Date.now()}.db`)}` }),
  },
  {
    name: 'postgres',
    env: async () => {
      const schema = freshSchemaName();
      schemas.push(schema);
      return { DATABASE_URL: postgresUrl(schema) };
    },
  },
];

after(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
  dir.remove();
});

for (const store of STORES) {
  describe(`forwarding survives a crash [${store.name}] (real processes)`, () => {
    it('SIGKILL mid-forwarding, restart: every acknowledged event reaches Meta', async () => {
      const meta: MetaServer = await startMetaServer();
      // Slow answers, so the kill lands while batches are in flight.
      const env = {
        ...(await store.env()),
        TRACKWAY_META_API_URL: meta.url,
        TRACKWAY_FORWARD_RETRY_SCHEDULE: Array(30).fill('1').join(','),
      };
      const made = await runCli(
        ['accounts', 'create', '--name', 'Faults', '--plan', 'enterprise', '--json'],
        env,
      );
      assert.equal(made.code, 0, made.stderr);
      const { api_key: key } = JSON.parse(made.stdout) as { api_key: string };
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      let server = await startServerProcess(env);
      try {
        const post = async (path: string, body: unknown) => {
          const res = await fetch(`${server.url}${path}`, {
            method: 'POST',
            headers,
            body: JSON.stringify(body),
          });
          return { status: res.status, json: (await res.json()) as Record<string, string> };
        };
        const pixel = await post('/v1/pixels', { name: 'Shop', domain: 'shop.example.com' });
        const pixelId = pixel.json['id']!;
        const dst = await post(`/v1/pixels/${pixelId}/destinations`, {
          type: 'meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        });
        assert.equal(dst.status, 201);

        const acknowledged: string[] = [];
        let running = true;
        const url = server.url;
        const writers = Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; running; i++) {
            const eventId = `w${w}-${i}`;
            try {
              const res = await fetch(`${url}/v1/track`, {
                method: 'POST',
                headers,
                body: JSON.stringify({
                  pixel_id: pixelId,
                  event_name: 'Lead',
                  event_id: eventId,
                  url: 'https://shop.example/checkout',
                  // A website event reaches Meta only with the visitor's user agent.
                  user_data: {
                    email: `w${w}-${i}@example.com`,
                    client_user_agent: 'Mozilla/5.0 (test)',
                  },
                }),
              });
              if (res.status === 200) acknowledged.push(eventId);
            } catch {
              return;
            }
          }
        });
        // Let forwarding get going, then kill the process while it is sending.
        await meta.waitFor(() => meta.events.length > 0);
        await sleep(500);
        assert.equal(await server.stop('SIGKILL'), null);
        running = false;
        await Promise.all(writers);
        assert.ok(acknowledged.length > 50, `only ${acknowledged.length} acknowledged`);

        server = await startServerProcess(env);
        const received = () => new Set(meta.events.map((e) => String(e['event_id'])));
        const deadline = Date.now() + 55_000;
        while (!acknowledged.every((id) => received().has(id))) {
          if (Date.now() > deadline) {
            const missing = acknowledged.filter((id) => !received().has(id));
            assert.fail(`${missing.length} acknowledged events never reached Meta`);
          }
          await sleep(100);
        }
        console.log(
          `forwarding crash [${store.name}]: ${acknowledged.length} acknowledged, all at Meta; ` +
            `${meta.duplicates} resent after the crash and deduplicated by event_id`,
        );
      } finally {
        await server.stop('SIGKILL');
        await meta.close();
      }
    });
  });
}
