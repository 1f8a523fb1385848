/**
 * Nothing acknowledged is lost (issue 7), on both stores, with real processes:
 *
 * - Crash: 50 concurrent writers; the API process is SIGKILLed mid-stream and restarted. Every
 *   event_id that got a 200 is stored exactly once, and the webhook receiver gets an
 *   event.tracked message for each of them.
 * - Graceful shutdown: SIGTERM under the same load. The process exits 0, and every event_id
 *   that got a 200 is stored.
 *
 * Run by `npm run test:faults` (and CI); the figures are printed for RELIABILITY.md.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { dropSchema, freshSchemaName, postgresUrl, tempDir } from './harness.ts';
import { runCli, startServerProcess } from './process.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const WRITERS = 50;

interface Store {
  name: string;
  env(): Promise<Record<string, string>>;
  cleanup(): Promise<void>;
}

const dir = tempDir();
const schemas: string[] = [];
const STORES: Store[] = [
  {
    name: 'sqlite',
    env: async () => ({ DATABASE_URL: `sqlite:${join(dir.path, `${Date.now()}.db`)}` }),
    cleanup: async () => {},
  },
  {
    name: 'postgres',
    env: async () => {
      const schema = freshSchemaName();
      schemas.push(schema);
      return { DATABASE_URL: postgresUrl(schema) };
    },
    cleanup: async () => {
      for (const schema of schemas.splice(0)) await dropSchema(schema);
    },
  },
];

/** The service, an account, a pixel and a webhook endpoint to `receiver`. */
async function setUp(store: Store, receiver: Receiver) {
  const env = {
    ...(await store.env()),
    TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
    TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
    TRACKWAY_WEBHOOK_RETRY_SCHEDULE: Array(30).fill('1').join(','),
  };
  const made = await runCli(
    ['accounts', 'create', '--name', 'Faults', '--plan', 'enterprise', '--json'],
    env,
  );
  assert.equal(made.code, 0, made.stderr);
  const { api_key: key } = JSON.parse(made.stdout) as { api_key: string };
  const server = await startServerProcess(env);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = async (url: string, path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, string> };
  };
  const pixel = await post(server.url, '/v1/pixels', { name: 'Shop', domain: 'shop.example.com' });
  assert.equal(pixel.status, 201);
  const hook = await post(server.url, '/v1/webhooks', {
    url: receiver.url,
    events: ['event.tracked'],
  });
  assert.equal(hook.status, 201);
  return { env, server, headers, pixelId: pixel.json['id']! };
}

/**
 * 50 writers sending new events as fast as answers come, until `stopWhen` resolves; returns
 * the acknowledged ids. Connection errors (the process is gone) end a writer quietly.
 */
async function load(url: string, headers: Record<string, string>, pixelId: string) {
  const agent = new Agent({ connections: WRITERS });
  const acknowledged: string[] = [];
  let sent = 0;
  let running = true;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; running; i++) {
      const eventId = `w${w}-${i}`;
      sent += 1;
      try {
        const res = await fetch(`${url}/v1/track`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ pixel_id: pixelId, event_name: 'Lead', event_id: eventId }),
          // @ts-expect-error undici's dispatcher option is not in the DOM fetch types
          dispatcher: agent,
        });
        const body = (await res.json()) as { success?: boolean };
        if (res.status === 200 && body.success) acknowledged.push(eventId);
      } catch {
        return;
      }
    }
  });
  return {
    acknowledged,
    sent: () => sent,
    async stop() {
      running = false;
      await Promise.all(writers);
      await agent.close();
    },
  };
}

/** Every stored event_id of the pixel (newest first, page by page). */
async function storedIds(url: string, headers: Record<string, string>, pixelId: string) {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await fetch(`${url}/v1/pixels/${pixelId}/events?limit=100&offset=${offset}`, {
      headers,
    });
    const page = (await res.json()) as { events: Array<{ event_id: string }>; total: number };
    ids.push(...page.events.map((e) => e.event_id));
    if (page.events.length < 100) return { ids, total: page.total };
  }
}

for (const store of STORES) {
  describe(`nothing acknowledged is lost [${store.name}] (real processes)`, () => {
    after(() => store.cleanup());

    it('SIGKILL under 50 writers: every 200 stored once, every message delivered', async () => {
      const receiver = await startReceiver();
      let { env, server, headers, pixelId } = await setUp(store, receiver);
      try {
        const writers = await load(server.url, headers, pixelId);
        await sleep(1_500);
        assert.equal(await server.stop('SIGKILL'), null);
        await writers.stop();
        const acked = writers.acknowledged;
        assert.ok(acked.length > 50, `only ${acked.length} acknowledged before the kill`);

        server = await startServerProcess(env);
        const { ids, total } = await storedIds(server.url, headers, pixelId);
        const stored = new Set(ids);
        assert.equal(stored.size, ids.length, 'no event stored twice');
        assert.equal(total, ids.length, 'the total agrees with the rows');
        const missing = acked.filter((id) => !stored.has(id));
        assert.deepEqual(missing, [], 'every acknowledged event is stored');

        const eventIds = () => new Set(receiver.received.map((r) => r.json.data['event_id']));
        await receiver.waitFor(() => acked.every((id) => eventIds().has(id)), 60_000);
        console.log(
          `crash [${store.name}]: ${writers.sent()} sent, ${acked.length} acknowledged, ` +
            `${ids.length} stored (0 missing, 0 twice); ${eventIds().size} distinct messages ` +
            `received for ${acked.length} acknowledged (0 missing)`,
        );
      } finally {
        await server.stop('SIGKILL');
        await receiver.close();
      }
    });

    it('SIGTERM under 50 writers: exit 0, every 200 stored', async () => {
      const receiver = await startReceiver();
      let { env, server, headers, pixelId } = await setUp(store, receiver);
      try {
        const writers = await load(server.url, headers, pixelId);
        await sleep(1_500);
        const started = Date.now();
        const code = await server.stop('SIGTERM');
        const drainMs = Date.now() - started;
        await writers.stop();
        assert.equal(code, 0, `exit code ${code}\n${server.errors()}`);
        const acked = writers.acknowledged;
        server = await startServerProcess(env);
        const { ids } = await storedIds(server.url, headers, pixelId);
        const stored = new Set(ids);
        const missing = acked.filter((id) => !stored.has(id));
        assert.deepEqual(missing, [], 'every acknowledged event is stored');
        console.log(
          `sigterm [${store.name}]: exit 0 after ${drainMs} ms; ${acked.length} acknowledged, ` +
            `${ids.length} stored, 0 missing`,
        );
      } finally {
        await server.stop('SIGKILL');
        await receiver.close();
      }
    });
  });
}

after(() => dir.remove());
