/**
 * Export fairness (issue 30 item 2, contract §21), against a real `trackway serve` on SQLite:
 * a pixel of EVENTS events is exported by curl (another process, reading as fast as it can)
 * while this process asks `/healthz` and another account's `POST /v1/track` in turn, one every
 * 10 ms; each latency counts from when the request was due, so a held event loop shows whole.
 *
 *   node --import tsx bench/fairness-export.ts [events=500000]
 *
 * Only the HTTP API and the database file are used, so an older checkout is measured the same.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startBenchService } from './lib.ts';

const EVENTS = Number(process.argv[2] ?? 500_000);
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fair-export-'));
const file = join(dir, 't.db');
const databaseUrl = `sqlite:${file}`;
const service = await startBenchService(databaseUrl, { TRACKWAY_WORKER: 'off' });
try {
  const made = spawnSync(
    process.execPath,
    [BIN, 'accounts', 'create', '--name', 'Other', '--plan', 'ultra', '--json'],
    { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
  );
  const other = JSON.parse(made.stdout) as { api_key: string };
  const otherHeaders = {
    authorization: `Bearer ${other.api_key}`,
    'content-type': 'application/json',
  };
  const base = service.running.url;
  const otherPixel = (
    (await (
      await fetch(`${base}/v1/pixels`, {
        method: 'POST',
        headers: otherHeaders,
        body: JSON.stringify({ name: 'Other', domain: 'other.example.com' }),
      })
    ).json()) as { id: string }
  ).id;
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  const account = (
    db.prepare('SELECT account_id FROM pixels WHERE id = ?').get(service.pixelId) as {
      account_id: string;
    }
  ).account_id;
  const now = Date.now();
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency,
       timestamp, received_at, url, custom_data)
     SELECT ?, ?, 'evt_' || i, 'Purchase', i, 'USD', ? - i * 100, ?,
       'https://shop.example.com/checkout?order=' || i, json_object('order', i) FROM n`,
  ).run(EVENTS, account, service.pixelId, now, now);
  db.close();

  const started = performance.now();
  const curl = spawn('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{size_download}',
    '-H',
    `authorization: ${service.headers.authorization}`,
    `${base}/v1/pixels/${service.pixelId}/events/export`,
  ]);
  let out = '';
  curl.stdout.on('data', (d) => {
    out += d;
  });
  let finished = false;
  const exited = once(curl, 'exit').then(() => {
    finished = true;
  });
  const health: number[] = [];
  const track: number[] = [];
  let n = 0;
  let due = performance.now() + 100;
  while (!finished) {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const which = n % 2 === 0 ? health : track;
    const res =
      which === health
        ? await fetch(`${base}/healthz`)
        : await fetch(`${base}/v1/track`, {
            method: 'POST',
            headers: otherHeaders,
            body: JSON.stringify({ pixel_id: otherPixel, event_name: 'Lead', event_id: `p${n}` }),
          });
    await res.arrayBuffer();
    which.push(performance.now() - due);
    n++;
    due = Math.max(due + 10, performance.now());
  }
  await exited;
  const took = performance.now() - started;
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const at = (p: number) =>
      +(s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0).toFixed(1);
    return { n: s.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: +(s.at(-1) ?? 0).toFixed(1) };
  };
  const [status, bytes] = out.split(' ');
  console.log(
    JSON.stringify({
      events: EVENTS,
      export_status: Number(status),
      export_mb: +(Number(bytes) / 1e6).toFixed(1),
      export_ms: Math.round(took),
      healthz: stats(health),
      other_account_track: stats(track),
    }),
  );
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
