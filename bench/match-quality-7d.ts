/**
 * The cost of `match_quality_7d` (GET /v1/pixels/:id) on a pixel with 100,000 events spread over
 * the last 7 days and 5 event names, on each store of the test matrix: the read comes from the
 * hourly rollup (event_counts), so it should not grow with the number of events.
 *
 *   node --import tsx bench/match-quality-7d.ts [--events 100000]
 */
import { parseArgs } from 'node:util';
import { prepareEvent } from '../src/domain/events/track-event.ts';
import { newId } from '../src/domain/ids.ts';
import { testStores } from '../test/harness.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' } } });
const N = Number(values.events);
const HOUR = 3_600_000;
const NAMES = ['PageView', 'ViewContent', 'AddToCart', 'Purchase', 'Lead'];

for (const kind of await testStores()) {
  const store = await kind.open();
  const accountId = newId('acct');
  const pixelId = newId('px');
  const now = new Date();
  const events = Array.from({ length: N }, (_, i) =>
    prepareEvent(
      accountId,
      {
        pixel_id: pixelId,
        event_name: NAMES[i % NAMES.length],
        event_id: `e-${i}`,
        timestamp: new Date(now.getTime() - (i % (7 * 24)) * HOUR - 1_000).toISOString(),
        user_data:
          i % 3 === 0
            ? { email: `u${i}@example.com`, client_ip_address: '203.0.113.7' }
            : { fbp: 'fb.1.1732473730000.1098115397' },
      },
      now,
    ),
  );
  const loadStart = Date.now();
  for (let i = 0; i < N; i += 1_000) {
    await store.events.insertEvents(
      events.slice(i, i + 1_000).map((event) => ({ event, emit: [] })),
    );
  }
  const loaded = Date.now() - loadStart;
  const fromHour = Math.floor((now.getTime() - 7 * 24 * HOUR) / HOUR);
  const runs = 200;
  const read = async () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++)
      await store.matchKeys.averageMatchQuality(accountId, pixelId, fromHour);
    return Number(process.hrtime.bigint() - start) / 1e6 / runs;
  };
  // Straight after the load, the rollup's rows carry the dead versions of every upsert
  // (PostgreSQL); autovacuum clears them in production. Measured both ways.
  const fresh = await read();
  const pool = (store as { pool?: { query(sql: string): Promise<unknown> } }).pool;
  if (pool) await pool.query('VACUUM ANALYZE event_counts');
  let average: number | null = null;
  for (let i = 0; i < 20; i++)
    average = await store.matchKeys.averageMatchQuality(accountId, pixelId, fromHour);
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++)
    average = await store.matchKeys.averageMatchQuality(accountId, pixelId, fromHour);
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
  // For comparison, the same mean read from the events themselves (the index bounds the rows,
  // but every row of the 7 days is visited): what the rollup saves.
  const since = new Date(fromHour * HOUR);
  const db = (store as { db?: { prepare(sql: string): { get(...a: unknown[]): unknown } } }).db;
  let scanMs = Number.NaN;
  const scanRuns = 10;
  if (db) {
    const statement = db.prepare(
      "SELECT avg(json_extract(match_quality, '$.score')) FROM events WHERE account_id = ? AND pixel_id = ? AND timestamp >= ?",
    );
    const start = process.hrtime.bigint();
    for (let i = 0; i < scanRuns; i++) statement.get(accountId, pixelId, since.getTime());
    scanMs = Number(process.hrtime.bigint() - start) / 1e6 / scanRuns;
  } else if (pool) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < scanRuns; i++)
      await (pool as unknown as { query(sql: string, p: unknown[]): Promise<unknown> }).query(
        "SELECT avg((match_quality ->> 'score')::float8) FROM events WHERE account_id = $1 AND pixel_id = $2 AND timestamp >= $3",
        [accountId, pixelId, since],
      );
    scanMs = Number(process.hrtime.bigint() - start) / 1e6 / scanRuns;
  }
  console.log(
    `${kind.name.padEnd(9)} the same mean from the events table: ${scanMs.toFixed(1)} ms per read`,
  );
  console.log(
    `${kind.name.padEnd(9)} ${N} events (loaded in ${(loaded / 1000).toFixed(1)} s): match_quality_7d = ${average}, ${ms.toFixed(3)} ms per read (mean of ${runs}); ${fresh.toFixed(3)} ms straight after the load${pool ? ', before VACUUM' : ''}`,
  );
  await store.close();
}
