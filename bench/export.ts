/**
 * Export memory (issue 22 item 6): fills a SQLite database with `--events` events directly
 * (bulk SQL, as bench/growth.ts does: millions over HTTP would take hours), starts the real
 * server on it, downloads the whole ndjson export and reports the server's peak RSS (VmHWM)
 * beside its RSS before the export, with the bytes, rows and time taken.
 *
 *   npm run bench:export -- [--events 5000000] [--format ndjson|csv] [--file PATH] [--reuse]
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import { newPublishableKey } from '../src/domain/ids.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import { startServerProcess } from '../test/process.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '5000000' },
    format: { type: 'string', default: 'ndjson' },
    file: { type: 'string', default: join(tmpdir(), 'trackway-export-bench.db') },
    reuse: { type: 'boolean', default: false },
  },
});
const events = Number(values.events);
const file = values.file;
const PIXEL = 'px_exportbench000001';

const status = (pid: number, field: 'VmHWM' | 'VmRSS'): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024;
};

let apiKey: string;
const filling = Date.now();
if (!values.reuse) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
{
  const store = SqliteStore.open(file);
  const created = await createAccount(
    { store, clock: systemClock },
    { name: 'Bench', plan: 'ultra' },
  );
  apiKey = created.apiKey;
  const now = Date.now();
  // A reused file keeps its events under the first account: move the pixel to this one.
  store.db
    .prepare(
      `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at, updated_at,
         publishable_key)
       VALUES (?, ?, 'Shop', 'shop.example.com', 'shop.example.com', 'active', ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id`,
    )
    .run(PIXEL, created.account.id, now, now, newPublishableKey());
  if (values.reuse) {
    store.db
      .prepare('UPDATE events SET account_id = ? WHERE pixel_id = ?')
      .run(created.account.id, PIXEL);
  } else {
    store.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
           received_at, url, user_data, custom_data)
         SELECT ?, ?, 'evt_' || i, 'Purchase', i, 'USD', ? - i * 1000, ?,
           'https://shop.example.com/checkout/complete?order=' || i,
           json_object('em', lower(hex(randomblob(32)))), json_object('order', i, 'sku', 'SKU-' || i)
           FROM n`,
      )
      .run(events, created.account.id, PIXEL, now, now);
  }
  await store.close();
}
console.log(
  `filled ${events.toLocaleString('en')} events in ${((Date.now() - filling) / 1000).toFixed(1)} s`,
);

const server = await startServerProcess({ DATABASE_URL: `sqlite:${file}`, LOG_LEVEL: 'warn' });
const pid = server.child.pid!;
const before = status(pid, 'VmRSS');
const started = Date.now();
const res = await fetch(`${server.url}/v1/pixels/${PIXEL}/events/export?format=${values.format}`, {
  headers: { authorization: `Bearer ${apiKey}` },
});
let bytes = 0;
let rows = 0;
let peak = before;
for await (const chunk of res.body!) {
  bytes += chunk.byteLength;
  for (const byte of chunk) if (byte === 10) rows += 1;
  peak = Math.max(peak, status(pid, 'VmRSS'));
}
const seconds = (Date.now() - started) / 1000;
const hwm = status(pid, 'VmHWM');
await server.stop();
const result = {
  events,
  format: values.format,
  rows,
  megabytes: Math.round(bytes / 1024 / 1024),
  seconds: Number(seconds.toFixed(1)),
  rssBeforeMb: Math.round(before),
  rssPeakSampledMb: Math.round(peak),
  vmHwmMb: Math.round(hwm),
};
console.log(JSON.stringify(result, null, 2));
