// The storage-only ceiling of commit-baseline-server.mjs, for PostgreSQL: the bare node:http
// server, plus committing each event (or each batch, {events: [...]}) to the service's own
// events table (its first migration's, in a fresh schema at DATABASE_URL) before answering.
// One multi-row INSERT … SELECT FROM unnest per request, in its own transaction, on a pool of
// 10 connections like the service's (GROUP=1: per turn of the event loop, below). No authentication, rate limits, validation, hashing,
// counts or outbox: what it reaches is a ceiling for the service on this machine.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { answerTracked, serveJson } from './bare-json-server.mjs';

const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
const schema = `bench_ceiling_${process.pid}_${Date.now()}`;
url.searchParams.delete('schema');
const pool = new pg.Pool({
  connectionString: url.toString(),
  max: 10,
  options: `-c search_path=${schema}`,
});
const core = readFileSync(
  new URL('../src/storage/postgres/migrations/001_core.sql', import.meta.url),
  'utf8',
);
const setup = await pool.connect();
await setup.query(`CREATE SCHEMA ${schema}`);
await setup.query(`SET search_path = ${schema}`);
await setup.query(core.slice(core.indexOf('CREATE TABLE events')));
setup.release();

const INSERT = `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency,
    timestamp, received_at, url, user_data, custom_data)
  SELECT 'acct', * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::text[],
    $6::timestamptz[], $7::timestamptz[], $8::text[], $9::json[], $10::json[])
  ON CONFLICT (pixel_id, event_id) DO NOTHING`;

async function commit(events) {
  const now = new Date();
  const column = (pick) => events.map(pick);
  await pool.query(INSERT, [
    column((e) => String(e.pixel_id)),
    column((e) => String(e.event_id)),
    column((e) => String(e.event_name)),
    column((e) => e.value ?? null),
    column((e) => e.currency ?? null),
    column((e) => (Number.isNaN(Date.parse(e.timestamp)) ? now : new Date(e.timestamp))),
    column(() => now),
    column((e) => e.url ?? null),
    column((e) => JSON.stringify(e.user_data ?? null)),
    column((e) => JSON.stringify(e.custom_data ?? null)),
  ]);
}

/**
 * GROUP=1 (the single-event track bench): requests that arrive in one turn of the event loop
 * share one INSERT and one transaction, one at a time, as the service's group commit does
 * (src/storage/group-commit.ts); each is answered once that transaction has committed.
 * Batch requests ({events: [...]}) always commit on their own, as above.
 */
const GROUP = process.env.GROUP === '1';
let queue = [];
let running = false;
async function drain() {
  while (queue.length > 0) {
    const batch = queue;
    queue = [];
    try {
      await commit(batch.map((item) => item.event));
      for (const item of batch) answerTracked(item.res, item.event);
    } catch (error) {
      for (const item of batch) failed(item.res, error);
    }
  }
  running = false;
}

function failed(res, error) {
  res.writeHead(500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: 'Internal error', message: error.message }));
}

serveJson(
  (event, res) => {
    if (GROUP && !Array.isArray(event.events)) {
      queue.push({ event, res });
      if (!running) {
        running = true;
        setImmediate(() => void drain());
      }
      return;
    }
    commit(event.events ?? [event]).then(
      () => answerTracked(res, event),
      (error) => failed(res, error),
    );
  },
  async () => {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  },
);
