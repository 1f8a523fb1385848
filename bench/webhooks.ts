/**
 * Webhook delivery to a local receiver, two figures (issue 5 targets):
 *
 * 1. Commit-to-receipt latency (p50/p99, target p50 < 50 ms): events tracked at a steady
 *    rate (`--rate` per second, open loop, so a slow delivery cannot slow the senders and hide
 *    itself) through the API process, whose worker is woken by each commit. Measured from the
 *    moment the track request was sent (an upper bound on commit time) to the receiver's
 *    arrival.
 * 2. Throughput (target ≥ 2,000 deliveries/s): a backlog written while no worker runs, then
 *    drained by one standalone `trackway worker` process to `--endpoints` endpoints on the
 *    receiver; deliveries per second from the first arrival to the last.
 *
 *   npm run bench:webhooks -- [--store sqlite|postgres] [--events 2000] [--rate 200]
 *                             [--backlog 20000] [--endpoints 4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startReceiver } from '../test/receiver.ts';
import {
  percentile,
  saveResult,
  startBenchService,
  startProcess,
  table,
  withSchema,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '200' },
    backlog: { type: 'string', default: '20000' },
    endpoints: { type: 'string', default: '4' },
    store: { type: 'string', default: 'sqlite' },
  },
});
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

async function main(databaseUrl: string) {
  const receiver = await startReceiver();
  const env = {
    TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
    TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
  };
  const events = Number(values.events);
  const rate = Number(values.rate);
  const backlog = Number(values.backlog);
  const endpoints = Number(values.endpoints);
  const processes: Array<{ stop(): Promise<void> }> = [];
  try {
    // 1. Latency: worker inside the API process.
    const service = await startBenchService(databaseUrl, env);
    processes.push(service.running);
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${service.running.url}${path}`, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res;
    };
    const endpointBody = { url: receiver.url, events: ['event.tracked'] };
    await post('/v1/webhooks', endpointBody);
    const sentAt = new Map<string, number>();
    const ackMs: number[] = [];
    const started = performance.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < events; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const eventId = `lat-${i}`;
      sentAt.set(eventId, Date.now());
      const sent = performance.now();
      inflight.push(
        post('/v1/track', {
          pixel_id: service.pixelId,
          event_name: 'Lead',
          event_id: eventId,
        }).then(() => ackMs.push(performance.now() - sent)),
      );
    }
    await Promise.all(inflight);
    await receiver.waitFor((r) => r.length >= events, 60_000);
    const latencies = receiver.received
      .map((r) => r.at - sentAt.get(r.json.data['event_id'] as string)!)
      .sort((a, b) => a - b);
    await service.running.stop();

    // 2. Throughput: the backlog is written with no worker running, then drained.
    receiver.received.length = 0;
    const writer = await startProcess(
      process.execPath,
      [BIN, 'serve'],
      { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'warn', ...env, TRACKWAY_WORKER: 'false' },
      /Trackway is listening on (\S+)/,
    );
    processes.push(writer);
    const postTo = (path: string, body: unknown) =>
      fetch(`${writer.url}${path}`, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // The first endpoint exists already; the others share the receiver.
    for (let e = 1; e < endpoints; e++) await postTo('/v1/webhooks', endpointBody);
    const perEvent = Math.ceil(backlog / endpoints);
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < perEvent) {
          const i = next++;
          const body = { pixel_id: service.pixelId, event_name: 'Lead', event_id: `tp-${i}` };
          const res = await postTo('/v1/track', body);
          if (res.status !== 200) throw new Error(`track: ${res.status} ${await res.text()}`);
        }
      }),
    );
    await writer.stop();
    const expected = perEvent * endpoints;
    const drainStarted = performance.now();
    const worker = await startProcess(
      process.execPath,
      [BIN, 'worker'],
      { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env },
      /(Trackway delivery worker running)/,
    );
    processes.push(worker);
    await receiver.waitFor((r) => r.length >= expected, 600_000);
    const startupMs = performance.now() - drainStarted;
    // From the first arrival to the last: the worker process's own boot is not delivery time.
    const arrivals = receiver.received.map((r) => r.at);
    const seconds = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
    await worker.stop();
    const unique = new Set(receiver.received.map((r) => `${r.json.id}/${r.json.webhook_id}`)).size;

    const rows = [
      {
        measure: `commit-to-receipt p50 (ms), ${rate} events/s`,
        value: percentile(latencies, 50),
        target: '< 50',
      },
      { measure: 'commit-to-receipt p99 (ms)', value: percentile(latencies, 99), target: '' },
      {
        measure: 'POST /v1/track answered, p50 (ms)',
        value: Math.round(
          percentile(
            ackMs.sort((a, b) => a - b),
            50,
          ),
        ),
        target: '',
      },
      {
        measure: `deliveries/s (${expected} waiting, ${endpoints} endpoints, one worker)`,
        value: Math.round((expected - 1) / seconds),
        target: '≥ 2000',
      },
      {
        measure: 'duplicate deliveries in the drain',
        value: receiver.received.length - unique,
        target: '0',
      },
    ];
    console.log(
      `\nWebhooks to a local receiver (SQLite; worker boot + drain ${Math.round(startupMs)} ms)\n`,
    );
    console.log(table(rows));
    const name = values.store === 'sqlite' ? 'webhooks' : `webhooks-${values.store}`;
    console.log(`\nresults: ${saveResult(name, { events, rate, backlog, endpoints, rows })}`);
  } finally {
    for (const p of processes) await p.stop();
    await receiver.close();
  }
}

if (values.store === 'postgres') {
  await withSchema(main);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-wh-'));
  try {
    await main(`sqlite:${join(dir, 'bench.db')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
