import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { EXPORT_PAGE } from '../../domain/lifecycle/export.ts';
import type { PostgresStore } from '../../storage/postgres/store.ts';
import type { SqliteStore } from '../../storage/sqlite/store.ts';

for (const kind of await testStores()) {
  describe(`GET /v1/pixels/:pixel_id/events/export [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;
    const COUNT = EXPORT_PAGE * 2 + 7;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('ultra');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
      // Newest first in arrival, so oldest-first output is the store's order, not arrival's.
      const base = Date.parse('2026-03-01T00:00:00Z');
      for (let start = 0; start < COUNT; start += 500) {
        const events = [];
        for (let i = start; i < Math.min(start + 500, COUNT); i++) {
          events.push({
            pixel_id: pixelId,
            event_name: 'Purchase',
            event_id: `e${i}`,
            timestamp: new Date(base + (COUNT - i) * 1000).toISOString(),
            value: i,
            currency: 'USD',
            custom_data: { note: i === 3 ? 'say "hi", then\nleave' : 'plain' },
          });
        }
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/batch',
          payload: { events },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(() => h.close());

    const exportOf = (owner: TestAccount, query: string, id = pixelId) =>
      h.request(owner, { method: 'GET', url: `/v1/pixels/${id}/events/export?${query}` });

    it('streams ndjson, one record a line, oldest first, across pages', async () => {
      const res = await exportOf(acme, '');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      const lines = res.body.split('\n');
      assert.equal(lines.pop(), '');
      assert.equal(lines.length, COUNT);
      const records = lines.map((l) => JSON.parse(l));
      assert.equal(records[0].event_id, `e${COUNT - 1}`);
      assert.equal(records.at(-1).event_id, 'e0');
      const times = records.map((r) => Date.parse(r.timestamp));
      assert.ok(times.every((t, i) => i === 0 || t > times[i - 1]!));
      assert.deepEqual(Object.keys(records[0]), [
        'event_id',
        'event_name',
        'value',
        'currency',
        'timestamp',
        'status',
        'pixel_id',
        'url',
        'referrer',
        'title',
        'search_string',
        'custom_data',
        'user_data',
        'action_source',
        'match_quality',
        'source',
        'consent',
        'received_at',
        'dropped',
        'forwarding',
      ]);
    });

    it('writes csv with a header, nested objects as JSON text, quoted as RFC 4180 asks', async () => {
      const start = new Date(Date.parse('2026-03-01T00:00:00Z') + (COUNT - 3) * 1000).toISOString();
      const res = await exportOf(acme, `format=csv&start_date=${start}&end_date=${start}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      const [header, row, rest] = res.body.split('\r\n');
      assert.equal(
        header,
        'event_id,event_name,value,currency,timestamp,status,pixel_id,url,referrer,title,search_string,custom_data,user_data,action_source,match_quality,source,consent,received_at,dropped',
      );
      assert.ok(row!.startsWith(`e3,Purchase,3,USD,${start},processed,${pixelId},,,,,`));
      assert.ok(row!.includes(',"{""note"":""say \\""hi\\"", then\\nleave""}",,'), row);
      assert.equal(rest, '');
    });

    it('keeps to the range, refuses bad input, and is 404 for another account', async () => {
      const one = await exportOf(
        acme,
        'start_date=2026-03-01T00:00:01Z&end_date=2026-03-01T00:00:02Z',
      );
      assert.deepEqual(
        one.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).event_id),
        [`e${COUNT - 1}`, `e${COUNT - 2}`],
      );
      const empty = await exportOf(acme, 'start_date=2030-01-01');
      assert.equal(empty.statusCode, 200);
      assert.equal(empty.body, '');
      assert.equal((await exportOf(acme, 'format=xml')).statusCode, 400);
      assert.equal((await exportOf(acme, 'limit=5')).statusCode, 400);
      const reversed = await exportOf(acme, 'start_date=2026-03-02&end_date=2026-03-01');
      assert.equal(reversed.statusCode, 400);
      assert.equal(reversed.json().field, 'start_date');
      assert.equal((await exportOf(other, '')).statusCode, 404);
    });
  });
}

// Contract §21: an export of a large pixel never holds the event loop; while it streams to a
// client that keeps up (curl, another process), /healthz and another account's /v1/track stay
// quick. Before the pages yielded, SQLite's synchronous reads ran the whole export in one turn.
const BIG = 60_000;
for (const kind of await testStores()) {
  describe(`a large export beside other requests [${kind.name}]`, () => {
    let h: Harness;
    let base: string;
    let big: TestAccount;
    let other: TestAccount;
    let pixelId: string;
    let otherPixel: string;

    before(async () => {
      h = await startHarness(kind);
      base = await h.app.listen({ port: 0, host: '127.0.0.1' });
      big = await h.account('ultra');
      other = await h.account('ultra');
      pixelId = await h.pixel(big);
      otherPixel = await h.pixel(other);
      const now = Date.now();
      // Filled in one statement, outside the store's write path (its set-up is not the test).
      if (kind.name === 'sqlite') {
        (h.adapter as SqliteStore).db
          .prepare(
            `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
             INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency,
               timestamp, received_at, url, custom_data)
             SELECT ?, ?, 'evt_' || i, 'Purchase', i, 'USD', ? - i * 1000, ?,
               'https://shop.example.com/checkout?order=' || i, json_object('order', i) FROM n`,
          )
          .run(BIG, big.account.id, pixelId, now, now);
      } else {
        const pool = (h.adapter as PostgresStore).pool;
        await pool.query(
          `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency,
             timestamp, received_at, url, custom_data)
           SELECT $1, $2, 'evt_' || i, 'Purchase', i, 'USD',
             date_trunc('milliseconds', now()) - i * interval '1 second', now(),
             'https://shop.example.com/checkout?order=' || i, json_build_object('order', i)
             FROM generate_series(1, $3::int) AS i`,
          [big.account.id, pixelId, BIG],
        );
        await pool.query('ANALYZE events');
      }
    });
    after(() => h.close());

    it('keeps /healthz and another account’s /v1/track quick while it streams', async () => {
      const started = performance.now();
      const curl = spawn('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %{size_download}',
        '-H',
        `authorization: ${big.headers.authorization}`,
        `${base}/v1/pixels/${pixelId}/events/export`,
      ]);
      let out = '';
      curl.stdout.on('data', (d) => {
        out += d;
      });
      const done = once(curl, 'exit');
      let finished = false;
      void done.then(() => {
        finished = true;
      });
      // Let the export begin before probing.
      await new Promise((r) => setTimeout(r, 100));
      const latencies: number[] = [];
      let n = 0;
      while (!finished) {
        const t = performance.now();
        const res =
          n % 2 === 0
            ? await fetch(`${base}/healthz`)
            : await fetch(`${base}/v1/track`, {
                method: 'POST',
                headers: { ...other.headers, 'content-type': 'application/json' },
                body: JSON.stringify({
                  pixel_id: otherPixel,
                  event_name: 'Lead',
                  event_id: `p${n}`,
                }),
              });
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        latencies.push(performance.now() - t);
        n++;
        await new Promise((r) => setTimeout(r, 10));
      }
      const took = performance.now() - started;
      const [status, bytes] = out.split(' ');
      assert.equal(status, '200');
      latencies.sort((a, b) => a - b);
      const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? 0;
      console.log(
        `export of ${BIG} events (${(Number(bytes) / 1e6).toFixed(1)} MB) in ${took.toFixed(0)} ms: ${latencies.length} other requests, p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`,
      );
      // Before the fix one request was answered in the whole export (SQLite). The contract's
      // goal is p99 under 100 ms (500,000 events, bench/fairness-export.ts); this shared
      // 2-core machine runs other suites beside this one, so the bound here leaves room.
      assert.ok(
        latencies.length >= 20,
        `only ${latencies.length} requests answered during the export`,
      );
      const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
      assert.ok(p50 < 100, `p50 ${p50.toFixed(0)} ms`);
      assert.ok(p99 < 1_000, `p99 ${p99.toFixed(0)} ms`);
    });
  });
}
