/**
 * Replay fairness (issue 30 item 3, contract §21): a replay over a large range, while another
 * account tracks one event every 5 ms. Prints how long the replay request took, how long until
 * every job was queued, and the other account's insert latency (p50 / p99 / max), measured from
 * when each insert was due, so a held event loop or a held write lock both show.
 *
 *   node --import tsx bench/fairness-replay.ts sqlite 500000
 *   node --import tsx bench/fairness-replay.ts postgres 30000
 *
 * Runs on the store's ports only, so the same file measures an older checkout (before the
 * replay was chunked: its replay queued everything in one transaction).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import type { Destination } from '../src/domain/forwarding/model.ts';
import { newId, newPublishableKey } from '../src/domain/ids.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import type { Store } from '../src/domain/ports/store.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';

const kind = process.argv[2] ?? 'sqlite';
const EVENTS = Number(process.argv[3] ?? 100_000);
const PG_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

const pct = (sorted: number[], p: number) =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0);

async function open(): Promise<{
  store: Store;
  fill: (a: string, p: string) => Promise<void>;
  done: () => Promise<void>;
}> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'fair-replay-'));
    const store = SqliteStore.open(join(dir, 't.db'));
    return {
      store,
      async fill(accountId, pixelId) {
        store.db
          .prepare(
            `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
             INSERT INTO events (account_id, pixel_id, event_id, event_name, timestamp, received_at)
             SELECT ?, ?, 'evt_' || i, 'Purchase', ? - i * 100, ? FROM n`,
          )
          .run(EVENTS, accountId, pixelId, Date.now() - 60_000, Date.now());
      },
      async done() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `fair_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = `${PG_URL}?options=-c%20search_path%3D${schema}`;
  const store = await PostgresStore.open({ url, poolSize: 10 });
  await store.migrate();
  return {
    store,
    async fill(accountId, pixelId) {
      await store.pool.query(
        `INSERT INTO events (account_id, pixel_id, event_id, event_name, timestamp, received_at)
         SELECT $1, $2, 'evt_' || i, 'Purchase',
           date_trunc('milliseconds', now()) - interval '1 minute' - i * interval '100 milliseconds',
           now() FROM generate_series(1, $3::int) AS i`,
        [accountId, pixelId, EVENTS],
      );
      await store.pool.query('ANALYZE events');
    },
    async done() {
      await store.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

async function pixelOf(store: Store, accountId: string): Promise<string> {
  const now = new Date();
  const id = newId('px');
  await store.pixels.createPixel(
    {
      id,
      accountId,
      name: 'Shop',
      domain: 'shop.example.com',
      trackingDomain: 'shop.example.com',
      status: 'active',
      publishableKey: newPublishableKey(),
      previousPublishableKey: null,
      previousKeyExpiresAt: null,
      createdAt: now,
      updatedAt: now,
    },
    null,
    [],
  );
  return id;
}

const { store, fill, done } = await open();
const ctx = { store, clock: systemClock };
const owner = (await createAccount(ctx, { name: 'Replays', plan: 'ultra' })).account;
const other = (await createAccount(ctx, { name: 'Other', plan: 'ultra' })).account;
const pixel = await pixelOf(store, owner.id);
const otherPixel = await pixelOf(store, other.id);
await fill(owner.id, pixel);
const now = new Date();
const destination: Destination = {
  id: newId('dst'),
  accountId: owner.id,
  pixelId: pixel,
  type: 'meta',
  name: null,
  config: { pixel_id: '123456789012345', access_token: 'EAAtesttoken123' },
  events: null,
  sources: null,
  enabled: true,
  state: 'active',
  lastError: null,
  createdAt: now,
  updatedAt: now,
};
await store.destinations.createDestination(destination, 10);

// The other account: one event every 5 ms, latency from when it was due.
const latencies: number[] = [];
let probing = true;
let n = 0;
const probe = (async () => {
  let due = performance.now();
  while (probing) {
    const at = new Date();
    await store.events.insertEvent(
      {
        accountId: other.id,
        pixelId: otherPixel,
        eventId: `probe-${n++}`,
        eventName: 'PageView',
        value: null,
        currency: null,
        timestamp: at,
        receivedAt: at,
        url: null,
        referrer: null,
        title: null,
        searchString: null,
        userData: null,
        customData: null,
      },
      [],
    );
    latencies.push(performance.now() - due);
    due += 5;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    else due = performance.now();
  }
})();
await new Promise((r) => setTimeout(r, 300));

const started = performance.now();
const forwarding = store.forwarding as Store['forwarding'] & {
  claimReplay?: Store['forwarding']['claimReplay'];
};
let answered = 0;
let queued = 0;
let worst = 0;
let failure: string | null = null;
try {
  queued = await store.forwarding.replay({
    accountId: owner.id,
    pixelId: pixel,
    destinationId: destination.id,
    from: new Date(0),
    to: new Date(Date.now() + 60_000),
    statuses: ['failed', 'skipped'],
    now: new Date(),
  });
  answered = performance.now() - started;
  // After the change: a worker queues the chunks, pacing as forwarding-worker.ts does.
  if (typeof forwarding.claimReplay === 'function') {
    const held = await forwarding.claimReplay({ owner: 'bench', now: new Date(), leaseMs: 30_000 });
    while (held) {
      const t = performance.now();
      const step = await store.forwarding.advanceReplay({
        replay: held,
        owner: 'bench',
        now: new Date(),
        leaseMs: 30_000,
      });
      const took = performance.now() - t;
      worst = Math.max(worst, took);
      if (step === null || step.done) break;
      await new Promise((r) => setTimeout(r, Math.min(took, 1_000)));
    }
  } else {
    worst = answered;
  }
} catch (error) {
  answered = performance.now() - started;
  failure = (error as Error).message;
}
const allQueued = performance.now() - started;
await new Promise((r) => setTimeout(r, 300));
probing = false;
await probe;
const sorted = [...latencies].sort((a, b) => a - b);
const pending = (await store.forwarding.backlog()).find(
  (b) => b.destinationId === destination.id,
)?.pending;
console.log(
  JSON.stringify({
    store: kind,
    events: EVENTS,
    queued,
    pending_after: pending ?? 0,
    failure,
    replay_answer_ms: Math.round(answered),
    all_queued_ms: Math.round(allQueued),
    longest_transaction_ms: Math.round(worst),
    other_account_inserts: sorted.length,
    other_p50_ms: +pct(sorted, 0.5).toFixed(1),
    other_p99_ms: +pct(sorted, 0.99).toFixed(1),
    other_max_ms: +(sorted.at(-1) ?? 0).toFixed(1),
  }),
);
await done();
