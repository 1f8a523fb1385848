// A second baseline: the bare node:http server of baseline-server.mjs, plus the one thing no
// correct /v1/track can skip: committing each event durably before answering. The same
// durability as the service (WAL; each batch committed without a flush, then the WAL flushed
// with fdatasync off the event loop, answered after that flush: src/storage/sqlite/wal-sync.ts),
// the same events table and indexes, concurrent requests grouped into one transaction per loop
// turn; a batch ({events: [...]}) commits all its events. No authentication, rate limits, validation, hashing, counts or outbox. What it reaches
// is a ceiling for the service on this machine.
import { fdatasync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { answerTracked, serveJson } from './bare-json-server.mjs';

const dir = mkdtempSync(join(tmpdir(), 'trackway-commit-baseline-'));
const path = join(dir, 'events.db');
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
// The service's own events table, from its first migration.
const core = readFileSync(
  new URL('../src/storage/sqlite/migrations/001_core.sql', import.meta.url),
  'utf8',
);
db.exec(core.slice(core.indexOf('CREATE TABLE events')));
const insert = db.prepare(
  `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
     received_at, url, user_data, custom_data)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (pixel_id, event_id) DO NOTHING`,
);
const commit = db.transaction((batch) => {
  for (const item of batch) {
    for (const event of item.event.events ?? [item.event]) insertOne(event);
  }
});
function insertOne(event) {
  {
    const now = Date.now();
    insert.run(
      'acct',
      String(event.pixel_id),
      String(event.event_id),
      String(event.event_name),
      event.value ?? null,
      event.currency ?? null,
      Date.parse(event.timestamp) || now,
      now,
      event.url ?? null,
      JSON.stringify(event.user_data ?? null),
      JSON.stringify(event.custom_data ?? null),
    );
  }
}
const wal = openSync(`${path}-wal`, 'r');
// Committed batches waiting for a flush that starts after their commit; one flush at a time.
let unflushed = [];
let flushing = false;
function flushWal() {
  flushing = true;
  const batch = unflushed;
  unflushed = [];
  fdatasync(wal, (error) => {
    if (error) throw error;
    flushing = false;
    for (const { res, event } of batch) answerTracked(res, event);
    if (unflushed.length > 0) flushWal();
  });
}

let queue = [];
function flush() {
  const batch = queue;
  queue = [];
  commit.immediate(batch);
  for (const item of batch) unflushed.push(item);
  if (!flushing) flushWal();
}

serveJson(
  (event, res) => {
    if (queue.length === 0) setImmediate(flush);
    queue.push({ res, event });
  },
  () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  },
);
