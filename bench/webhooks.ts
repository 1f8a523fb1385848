/**
 * Webhook delivery: commit-to-receipt latency (p50/p99) on a steady stream of tracked events,
 * and deliveries per second draining a backlog with the standalone `trackway worker`, both to
 * a local receiver. Targets (issue 5): p50 < 50 ms, ≥ 2,000 deliveries/s.
 *
 *   npm run bench:webhooks -- [--events 2000] [--backlog 20000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startReceiver } from '../test/receiver.ts';
import { percentile, saveResult, startProcess, table } from './lib.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    backlog: { type: 'string', default: '20000' },
  },
});
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-wh-'));
  const receiver = await startReceiver();
  const env = {
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    PORT: '0',
    LOG_LEVEL: 'warn',
    TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
    TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
  };
  try {
    // 1. Latency: worker inside the API process, woken by each commit.
    let api = await startProcess(
      process.execPath,
      [BIN, 'serve'],
      env,
      /Trackway is listening on (\S+)/,
    );
    const key = /^ {2}(tw_live_\w+)$/m.exec(api.output())![1]!;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as Record<string, string>;
    };
    await post('/v1/webhooks', { url: receiver.url, events: ['event.tracked'] });
    const pixelId = (await post('/v1/pixels', { name: 'Bench', domain: 'bench.example.com' }))[
      'id'
    ]!;
    const events = Number(values.events);
    // A steady stream from 10 concurrent senders; each event's `timestamp` is its receipt time,
    // so receipt minus timestamp covers validation, commit, wake-up, signing and the POST.
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < events) {
          const i = next++;
          await post('/v1/track', { pixel_id: pixelId, event_name: 'Lead', event_id: `lat-${i}` });
        }
      }),
    );
    await receiver.waitFor((r) => r.length >= events, 60_000);
    const latencies = receiver.received
      .map((r) => r.at - Date.parse((r.json.data as { timestamp: string }).timestamp))
      .sort((a, b) => a - b);
    await api.stop();

    // 2. Throughput: a backlog written with no worker running, then drained by `trackway worker`.
    receiver.received.length = 0;
    api = await startProcess(
      process.execPath,
      [BIN, 'serve'],
      { ...env, TRACKWAY_WORKER: 'false' },
      /Trackway is listening on (\S+)/,
    );
    const backlog = Number(values.backlog);
    next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < backlog) {
          const i = next++;
          await post('/v1/track', { pixel_id: pixelId, event_name: 'Lead', event_id: `tp-${i}` });
        }
      }),
    );
    const started = performance.now();
    const worker = await startProcess(
      process.execPath,
      [BIN, 'worker'],
      env,
      /(Trackway delivery worker running)/,
    );
    await receiver.waitFor((r) => r.length >= backlog, 300_000);
    const seconds = (performance.now() - started) / 1000;
    await worker.stop();
    await api.stop();
    const unique = new Set(receiver.received.map((r) => r.json.id)).size;

    const rows = [
      { measure: 'commit-to-receipt p50 (ms)', value: percentile(latencies, 50), target: '< 50' },
      { measure: 'commit-to-receipt p99 (ms)', value: percentile(latencies, 99), target: '' },
      {
        measure: `deliveries/s (backlog of ${backlog}, one worker process)`,
        value: Math.round(backlog / seconds),
        target: '≥ 2000',
      },
      {
        measure: 'duplicate deliveries in the backlog run',
        value: receiver.received.length - unique,
        target: '0',
      },
    ];
    console.log(
      `\nWebhooks to a local receiver (SQLite, one endpoint, ${events} events for latency)\n`,
    );
    console.log(table(rows));
    console.log(`\nresults: ${saveResult('webhooks', { events, backlog, rows })}`);
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
