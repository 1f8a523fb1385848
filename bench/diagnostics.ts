/**
 * The diagnostics page's server time (issue 34: under 300 ms at 5,000,000 events), SQLite and
 * PostgreSQL.
 *
 * One pixel with three destinations (Meta, TikTok, GA4) gets N events' worth of rollups
 * (default 5,000,000) over the last 30 days: the newest REAL events (default 20,000) go
 * through the store's insert (so the example-event reads have rows to read) and the rest are
 * SEEDED as rollup rows. The seeded rows are made by the same code ingest runs: each simulated
 * event is a TrackedEvent whose bits come from `diagFlags()` and whose sums are gathered by
 * the insert's own `DiagBatch` (sqlite/diagnostics.ts), then upserted with the insert's
 * statements (SQLite) or the same rows by unnest (PostgreSQL); the forwarding outcomes are the
 * rows settlement writes (`pending` moved to forwarded / failed / skipped with their reasons).
 * Only the events table itself is left without those rows: the page never reads it but for
 * the examples' bounded lookups.
 *
 * Then GET /dashboard/diagnostics (signed in, app.inject: the server's whole answer, layout
 * included, without the network) is timed sequentially per period, p50/p95/max.
 *
 *   npm run bench:diagnostics -- [--events 5000000] [--real 20000] [--requests 30]
 *     [--store both|sqlite|postgres]
 */
import { parseArgs } from 'node:util';
import type pg from 'pg';
import type { Destination } from '../src/domain/forwarding/model.ts';
import { newId } from '../src/domain/ids.ts';
import type { MatchQuality, TrackedEvent } from '../src/domain/model.ts';
import { DIAG_FLAGS, diagFlags } from '../src/domain/stats/diagnostics.ts';
import type { PostgresStore } from '../src/storage/postgres/store.ts';
import { DiagBatch, diagStatements } from '../src/storage/sqlite/diagnostics.ts';
import type { SqliteStore } from '../src/storage/sqlite/store.ts';
import { startHarness, testStores } from '../test/harness.ts';
import { percentile, saveResult, table } from './lib.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '5000000' },
    real: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '30' },
    store: { type: 'string', default: 'both' },
  },
});
const EVENTS = Number(values.events);
const REAL = Math.min(EVENTS, Number(values.real));
const REQUESTS = Number(values.requests);
const HOUR_MS = 3_600_000;
const HOURS = 30 * 24;

/** A small deterministic generator, so both stores get the same events. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = Array.from({ length: 20 }, (_, i) =>
  i === 0
    ? 'PageView'
    : i === 1
      ? 'ViewContent'
      : i === 2
        ? 'AddToCart'
        : i === 3
          ? 'Purchase'
          : `Custom${i}`,
);

/** The i-th simulated event of the pixel (timestamps spread over the 30 days). */
function simulated(
  random: () => number,
  accountId: string,
  pixelId: string,
  i: number,
  ms: number,
): TrackedEvent {
  const timestamp = new Date(ms);
  const r = random();
  const name =
    NAMES[r < 0.5 ? 0 : r < 0.7 ? 1 : r < 0.85 ? 2 : r < 0.93 ? 3 : 4 + Math.floor(random() * 16)]!;
  const browser = random() < 0.6;
  const keys: string[] = [];
  if (random() < 0.3) keys.push('email');
  if (random() < 0.38) keys.push('fbc');
  if (random() < 0.15) keys.push('phone');
  if (random() < 0.7) keys.push('fbp');
  if (browser || random() < 0.8) keys.push('client_ip_address', 'client_user_agent');
  const enriched = !browser && random() < 0.3 ? ['fbp'] : undefined;
  const quality: MatchQuality = { score: 5, keys, missing: [], ...(enriched && { enriched }) };
  const purchase = name === 'Purchase';
  return {
    accountId,
    pixelId,
    eventId: `evt-${i}`,
    eventName: name,
    value: purchase ? Math.round(random() * 20000) / 100 : null,
    currency: purchase ? (random() < 0.6 ? 'EUR' : 'USD') : null,
    timestamp,
    receivedAt: timestamp,
    url: random() < 0.05 ? 'https://shop.example/?gclid=x' : 'https://shop.example/',
    referrer: null,
    title: null,
    searchString: null,
    userData: null,
    customData: null,
    source: browser ? 'browser' : 'server',
    matchQuality: quality,
    consent: random() < 0.08 ? { ad_user_data: 'denied' } : null,
    ...(random() < 0.01 && { dropped: ['user_data.phone'] }),
  };
}

/** Settlement's rows for one destination and hour: pending moved to each status. */
function outcomes(random: () => number, total: number) {
  const failed = Math.round(total * 0.03);
  const skipped = Math.round(total * 0.05);
  const pending = Math.round(total * 0.01);
  const reasons = [
    ['failed', 'Invalid parameter: event_time is too far in the past', Math.ceil(failed * 0.6)],
    ['failed', 'retries exhausted: HTTP 503', Math.floor(failed * 0.4)],
    ['skipped', 'consent: ad_user_data denied', Math.ceil(skipped * 0.7)],
    ['skipped', "outside Meta's 7-day window", Math.floor(skipped * 0.3)],
    ['pending', '', pending],
    ['forwarded', '', total - failed - skipped - pending],
  ] as const;
  void random;
  return reasons.filter((r) => r[2] > 0);
}

for (const kind of await testStores()) {
  if (values.store !== 'both' && values.store !== kind.name) continue;
  const h = await startHarness(kind);
  try {
    const owner = await h.account('pro');
    const pixelId = await h.pixel(owner);
    const accountId = owner.account.id;
    const now = h.clock.now().getTime();
    const firstMs = (Math.floor(now / HOUR_MS) - HOURS + 1) * HOUR_MS;
    const destinations: Destination[] = (
      [
        ['meta', { pixel_id: '123456789012345', access_token: 'EAAB-bench-token' }],
        ['tiktok', { pixel_code: 'C4ABCDEFGHIJ', access_token: 'tt-bench-token' }],
        ['ga4', { measurement_id: 'G-BENCH12345', api_secret: 'bench-secret' }],
      ] as const
    ).map(([type, config]) => ({
      id: newId('dst'),
      accountId,
      pixelId,
      type,
      name: null,
      config: { ...config },
      events: null,
      sources: null,
      enabled: true,
      state: 'active',
      lastError: null,
      createdAt: new Date(firstMs),
      updatedAt: new Date(firstMs),
    }));
    for (const d of destinations) await h.store.destinations.createDestination(d, 10);

    const seedStart = performance.now();
    const random = rng(34);
    const simulatedCount = EVENTS - REAL;
    const perHour = simulatedCount / HOURS;
    const sqlite = kind.name === 'sqlite' ? (h.adapter as unknown as SqliteStore).db : null;
    const pool = kind.name === 'postgres' ? (h.adapter as unknown as PostgresStore).pool : null;
    const statements = sqlite ? diagStatements(sqlite) : null;
    let i = 0;
    for (let hour = 0; hour < HOURS && i < simulatedCount; hour++) {
      const batch = new DiagBatch();
      const end = Math.min(simulatedCount, Math.round((hour + 1) * perHour));
      const hourStart = i;
      for (; i < end; i++) {
        const at =
          firstMs + hour * HOUR_MS + Math.floor(((i - hourStart) / (end - hourStart)) * HOUR_MS);
        const event = simulated(random, accountId, pixelId, i, at);
        batch.event(event, event.source ?? 'server', diagFlags(event), true);
      }
      const hourNumber = Math.floor(firstMs / HOUR_MS) + hour;
      const forwarded = destinations.flatMap((d) =>
        outcomes(random, end - hourStart).map(([status, reason, n]) => [
          pixelId,
          accountId,
          d.id,
          hourNumber,
          status,
          reason,
          n,
          `evt-${hourStart}`,
        ]),
      ) as Array<[string, string, string, number, string, string, number, string]>;
      if (sqlite && statements) {
        sqlite.transaction(() => {
          batch.write(statements);
          for (const row of forwarded) statements.forward.run(...row);
        })();
      } else if (pool) {
        await seedPostgres(pool, batch, forwarded);
      }
    }
    // The newest events for real, through the insert (rollups included), in batches.
    const real: TrackedEvent[] = [];
    for (let j = 0; j < REAL; j++) {
      const at = now - (REAL - j) * 100;
      real.push(simulated(random, accountId, pixelId, EVENTS - REAL + j, at));
    }
    for (let j = 0; j < real.length; j += 500) {
      await h.store.events.insertEvents(
        real.slice(j, j + 500).map((event) => ({ event, emit: [] })),
      );
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const signIn = await h.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      payload: new URLSearchParams({ api_key: owner.apiKey }).toString(),
    });
    const cookie = String(signIn.headers['set-cookie'] ?? '').split(';')[0]!;
    const rows: Array<Record<string, string | number>> = [];
    for (const period of ['24h', '7d', '30d']) {
      const url = `/dashboard/diagnostics?pixel_id=${pixelId}&period=${period}`;
      const first = await h.app.inject({ method: 'GET', url, headers: { cookie } });
      if (first.statusCode !== 200) throw new Error(`${url}: ${first.statusCode} ${first.body}`);
      const times: number[] = [];
      for (let r = 0; r < REQUESTS; r++) {
        const t = performance.now();
        await h.app.inject({ method: 'GET', url, headers: { cookie } });
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      rows.push({
        store: kind.name,
        period,
        p50_ms: percentile(times, 50).toFixed(1),
        p95_ms: percentile(times, 95).toFixed(1),
        max_ms: times.at(-1)!.toFixed(1),
      });
    }
    console.log(
      `\n${kind.name}: ${EVENTS.toLocaleString('en-US')} events' rollups (${REAL} real), seeded in ${seedSeconds.toFixed(0)} s`,
    );
    console.log(table(rows));
    saveResult(`diagnostics-${kind.name}`, {
      events: EVENTS,
      real: REAL,
      requests: REQUESTS,
      rows,
    });
  } finally {
    await h.close();
  }
}

/** The DiagBatch's rows and the outcomes, upserted as the PostgreSQL insert and settle do. */
async function seedPostgres(
  pool: pg.Pool,
  batch: DiagBatch,
  forwarded: Array<[string, string, string, number, string, string, number, string]>,
): Promise<void> {
  const r = batch.rows();
  const col = <T>(rows: T[][], i: number) => rows.map((x) => x[i]);
  const events = r.events.map((e) => [
    e.pixelId,
    e.accountId,
    e.hour,
    e.eventName,
    e.source,
    e.n,
    e.duplicates,
    ...e.flags,
  ]);
  const flagColumns = DIAG_FLAGS.join(', ');
  await pool.query(
    `INSERT INTO diag_hourly (pixel_id, account_id, hour, event_name, source, n, duplicates,
       ${flagColumns})
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
       $6::bigint[], $7::bigint[], ${DIAG_FLAGS.map((_, i) => `$${i + 8}::bigint[]`).join(', ')})`,
    events[0]!.map((_, i) => col(events, i)),
  );
  if (r.dropped.length > 0) {
    await pool.query(
      `INSERT INTO diag_dropped_hourly (pixel_id, account_id, hour, field, n)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[])`,
      [0, 1, 2, 3, 4].map((i) => col(r.dropped as unknown[][], i)),
    );
  }
  if (r.revenue.length > 0) {
    await pool.query(
      `INSERT INTO revenue_hourly (pixel_id, account_id, hour, event_name, currency, n, value_sum)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
         $6::bigint[], $7::float8[])`,
      [0, 1, 2, 3, 4, 5, 6].map((i) => col(r.revenue as unknown[][], i)),
    );
  }
  await pool.query(
    `INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason, n,
       example_event_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[],
       $7::bigint[], $8::text[])`,
    [0, 1, 2, 3, 4, 5, 6, 7].map((i) => col(forwarded as unknown[][], i)),
  );
}
