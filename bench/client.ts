/**
 * @trackway/node's throughput: events per second through `track()` into one real server
 * (its own process, SQLite file, every check on), next to raw `fetch` batches of the same events
 * and size into the same server in the same run. The machine is shared, so the figure to quote
 * is the ratio, not the absolute rates.
 *
 *   npm run bench:client -- [--events 30000] [--size 500]
 *
 * Both sides send one batch at a time (the last row: the client with two in flight) with fresh event_ids; the raw side sends plain JSON it
 * builds per batch, the client what `track()` does (an id per event, gzip, per-event results).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Trackway } from '../packages/node/src/index.ts';
import { saveResult, startBenchService, table } from './lib.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '30000' },
    size: { type: 'string', default: '500' },
  },
});
const total = Number(values.events);
const size = Number(values.size);

const event = (pixelId: string, n: number) => ({
  pixel_id: pixelId,
  event_name: 'Purchase',
  value: 49.99,
  currency: 'USD',
  url: 'https://shop.example.com/checkout/complete?order=1001',
  user_data: { email: 'jane.doe@example.com', phone: '+16505550199', first_name: 'Jane' },
  custom_data: { order_id: `order-${n}`, items: 3 },
});

async function rawFetch(
  url: string,
  headers: Record<string, string>,
  pixelId: string,
  round: string,
) {
  const started = performance.now();
  for (let sent = 0; sent < total; sent += size) {
    const events = Array.from({ length: Math.min(size, total - sent) }, (_, k) => ({
      ...event(pixelId, sent + k),
      event_id: `raw-${round}-${process.pid}-${sent + k}`,
    }));
    const res = await fetch(`${url}/v1/track/batch`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    });
    const body = (await res.json()) as { accepted: number };
    if (body.accepted !== events.length) throw new Error(`raw batch: ${JSON.stringify(body)}`);
  }
  return total / ((performance.now() - started) / 1000);
}

async function client(
  url: string,
  apiKey: string,
  pixelId: string,
  gzip: boolean,
  maxConcurrentRequests = 1,
) {
  const trackway = new Trackway({
    apiKey,
    baseUrl: url,
    maxBatchSize: size,
    gzip,
    maxConcurrentRequests,
  });
  const started = performance.now();
  for (let n = 0; n < total; n++) void trackway.track(event(pixelId, n));
  const results = await trackway.close();
  const rate = total / ((performance.now() - started) / 1000);
  const failed = results.filter((r) => !r.ok || r.deduplicated).length;
  if (failed > 0) throw new Error(`client: ${failed} events not newly stored`);
  return rate;
}

const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-client-'));
const service = await startBenchService(`sqlite:${join(dir, 'bench.db')}`);
try {
  const { url } = service.running;
  const apiKey = service.headers['authorization']!.replace('Bearer ', '');
  // A warm-up round each, so neither side pays for JIT or the first SQLite pages alone; then
  // the senders take turns, three rounds each, and the median counts: on a shared machine a
  // neighbour's burst then hits every sender alike.
  await client(url, apiKey, service.pixelId, true);
  await rawFetch(url, service.headers, service.pixelId, 'warm');
  const rounds = {
    raw: [] as number[],
    gzip: [] as number[],
    plain: [] as number[],
    two: [] as number[],
  };
  for (let round = 0; round < 3; round++) {
    rounds.raw.push(await rawFetch(url, service.headers, service.pixelId, `r${round}`));
    rounds.gzip.push(await client(url, apiKey, service.pixelId, true));
    rounds.plain.push(await client(url, apiKey, service.pixelId, false));
    rounds.two.push(await client(url, apiKey, service.pixelId, true, 2));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
  const raw = median(rounds.raw);
  const row = (sender: string, rates: number[]) => ({
    sender,
    'events/s (median of 3)': Math.round(median(rates)),
    'vs raw': (median(rates) / raw).toFixed(2),
  });
  const rows = [
    row('raw fetch batches (JSON)', rounds.raw),
    row('track() (gzip, default)', rounds.gzip),
    row('track() (gzip: false)', rounds.plain),
    row('track() (gzip, 2 requests in flight)', rounds.two),
  ];
  console.log(`${total} events per round, batches of ${size}, SQLite\n`);
  console.log(table(rows));
  saveResult('client', { events: total, size, rows, rounds });
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
