/**
 * The export holds one page of events at a time (contract §15: constant memory). The server
 * runs with a heap far smaller than the export: one that read every event before writing
 * would run out of memory and die, so a complete export proves the memory stays flat.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import { newPublishableKey } from '../src/domain/ids.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import { QUERY_TIMEOUT_MS } from '../src/storage/postgres/database.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import {
  dropSchema,
  freshSchemaName,
  postgresAvailable,
  postgresUrl,
  TEST_DATABASE_URL,
  tempDir,
} from './harness.ts';
import { type ServerProcess, startServerProcess } from './process.ts';

/** About 110 MB of ndjson; as JavaScript objects, several times the heap the server gets. */
const EVENTS = 300_000;
const HEAP_MB = 64;

interface Target {
  name: string;
  /** Creates an account, a pixel and EVENTS events directly in the store; the server's env. */
  fill(): Promise<{ env: Record<string, string>; apiKey: string; pixelId: string }>;
  cleanup(): Promise<void>;
}

const PIXEL = 'px_exportmemory00001';

const sqlite = (): Target => {
  const dir = tempDir('trackway-export-');
  return {
    name: 'sqlite',
    async fill() {
      const file = join(dir.path, 'trackway.db');
      const store = SqliteStore.open(file);
      const { account, apiKey } = await createAccount(
        { store, clock: systemClock },
        { name: 'Export', plan: 'ultra' },
      );
      const now = Date.now();
      store.db
        .prepare(
          `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at, updated_at,
             publishable_key)
           VALUES (?, ?, 'Shop', 'shop.example.com', 'shop.example.com', 'active', ?, ?, ?)`,
        )
        .run(PIXEL, account.id, now, now, newPublishableKey());
      store.db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
           INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
             received_at, url, user_data, custom_data)
           SELECT ?, ?, 'evt_' || i, 'Purchase', i, 'USD', ? - i * 1000, ?,
             'https://shop.example.com/checkout/complete?order=' || i,
             json_object('email', hex(randomblob(32))), json_object('order', i, 'sku', 'SKU-' || i)
             FROM n`,
        )
        .run(EVENTS, account.id, PIXEL, now, now);
      await store.close();
      return { env: { DATABASE_URL: `sqlite:${file}` }, apiKey, pixelId: PIXEL };
    },
    async cleanup() {
      dir.remove();
    },
  };
};

const postgres = (): Target => {
  const schema = freshSchemaName();
  return {
    name: 'postgres',
    // Times truncated to the millisecond, as the service writes them (001_core.sql).
    async fill() {
      const url = postgresUrl(schema);
      const store = await PostgresStore.open({ url, poolSize: 2 });
      await store.migrate();
      const { account, apiKey } = await createAccount(
        { store, clock: systemClock },
        { name: 'Export', plan: 'ultra' },
      );
      await store.pool.query(
        `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at, updated_at,
           publishable_key)
         VALUES ($1, $2, 'Shop', 'shop.example.com', 'shop.example.com', 'active', now(), now(), $3)`,
        [PIXEL, account.id, newPublishableKey()],
      );
      await store.close();
      // The bulk fill runs on its own connection, without the store pool's query timeout
      // (QUERY_TIMEOUT_MS, for requests): on a loaded machine 300,000 rows can take longer
      // than that, and a set-up must not depend on the machine being idle (issue 30 item 13).
      const fill = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await fill.connect();
      // What a busy machine does to the fill, made certain: a concurrent transaction holds
      // the table for longer than the store's query timeout. The fill must simply wait.
      const busy = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await busy.connect();
      await busy.query(`SET search_path TO ${schema}`);
      await busy.query('BEGIN');
      await busy.query('LOCK TABLE events IN SHARE MODE');
      const released = new Promise((resolve) => setTimeout(resolve, QUERY_TIMEOUT_MS + 500)).then(
        async () => {
          await busy.query('COMMIT');
          await busy.end();
        },
      );
      try {
        await fill.query(`SET search_path TO ${schema}`);
        await fill.query(
          `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
           received_at, url, user_data, custom_data)
         SELECT $1, $2, 'evt_' || i, 'Purchase', i, 'USD',
           date_trunc('milliseconds', now()) - i * interval '1 second', date_trunc('milliseconds', now()),
           'https://shop.example.com/checkout/complete?order=' || i,
           json_build_object('email', md5(i::text) || md5((i + 1)::text)),
           json_build_object('order', i, 'sku', 'SKU-' || i)
           FROM generate_series(1, $3::int) AS i`,
          [account.id, PIXEL, EVENTS],
        );
        // As autovacuum would soon: without statistics on a table filled in one statement,
        // the planner sorts every match for each page instead of walking the index.
        await fill.query('ANALYZE events');
      } finally {
        await released;
        await fill.end();
      }
      return { env: { DATABASE_URL: url }, apiKey, pixelId: PIXEL };
    },
    async cleanup() {
      await dropSchema(schema);
    },
  };
};

const targets = [sqlite(), ...((await postgresAvailable()) ? [postgres()] : [])];

for (const target of targets) {
  describe(`export in constant memory [${target.name}]`, () => {
    let server: ServerProcess;
    let auth: { authorization: string };
    let pixelId: string;

    before(async () => {
      const filled = await target.fill();
      pixelId = filled.pixelId;
      auth = { authorization: `Bearer ${filled.apiKey}` };
      server = await startServerProcess({
        ...filled.env,
        NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
      });
    });
    after(async () => {
      await server?.stop();
      await target.cleanup();
    });

    it(`streams ${EVENTS.toLocaleString('en')} events from a ${HEAP_MB} MB heap, oldest first`, async () => {
      const res = await fetch(`${server.url}/v1/pixels/${pixelId}/events/export`, {
        headers: auth,
      });
      assert.equal(res.status, 200);
      const decoder = new TextDecoder();
      let lines = 0;
      let bytes = 0;
      let tail = '';
      let first = '';
      for await (const chunk of res.body!) {
        bytes += chunk.byteLength;
        const text = tail + decoder.decode(chunk, { stream: true });
        const parts = text.split('\n');
        tail = parts.pop()!;
        if (lines === 0 && parts.length > 0) first = parts[0]!;
        lines += parts.length;
      }
      assert.equal(tail, '');
      assert.equal(lines, EVENTS);
      // More than the server's whole heap went through it.
      assert.ok(bytes > HEAP_MB * 1024 * 1024, `${bytes} bytes`);
      // The oldest event is the one placed furthest in the past.
      assert.equal(JSON.parse(first).event_id, `evt_${EVENTS}`);
      assert.equal(server.child.exitCode, null);
    });
  });
}
