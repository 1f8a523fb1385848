/**
 * Forwarding to a local Meta Conversions API (issue 17 targets), two figures:
 *
 * 1. Throughput (target ≥ 20,000 events/s on SQLite, ≥ 10,000/s on PostgreSQL): a backlog of
 *    `--backlog` events written while no worker runs, then drained by one standalone
 *    `trackway worker` process (pinned to the server core); events/s from the first arrival at
 *    the local Meta server to the last.
 * 2. Commit-to-platform latency p50/p99 (target p50 ≤ 1.5 s): events tracked at a steady rate
 *    (`--rate` per second, open loop) through the API process, whose forwarding worker is woken
 *    by each commit; measured from the moment the track request was sent to the event's
 *    arrival at the local Meta server.
 *
 *   npm run bench:forwarding -- [--store sqlite|postgres] [--backlog 100000] [--events 2000]
 *                               [--rate 200]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startMetaServer } from '../test/platforms/meta-server.ts';
import {
  choosePinning,
  PIN_OPTIONS,
  percentile,
  saveResult,
  startBenchService,
  startProcess,
  table,
  withSchema,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    backlog: { type: 'string', default: '100000' },
    events: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '200' },
    store: { type: 'string', default: 'sqlite' },
    ...PIN_OPTIONS,
  },
});
const pinned = choosePinning(values);

/**
 * What a shop's backend sends for a website conversion: without the page's URL and the
 * visitor's user agent Meta refuses a `website` event, so the engine would skip it unsent.
 */
function websiteEvent(person: string) {
  return {
    action_source: 'website',
    url: `https://shop.example/checkout?p=${person}`,
    user_data: {
      email: `${person}@example.com`,
      client_ip_address: '203.0.113.7',
      client_user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Trackway bench',
    },
  };
}
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

async function main(databaseUrl: string) {
  const meta = await startMetaServer();
  const arrivals = new Map<string, number>();
  // Called for every event the local Meta validates: its arrival time.
  meta.rejectEvent = (event) => {
    arrivals.set(String(event['event_id']), Date.now());
    return undefined;
  };
  const env = { TRACKWAY_META_API_URL: meta.url };
  const backlog = Number(values.backlog);
  const events = Number(values.events);
  const rate = Number(values.rate);
  const processes: Array<{ stop(): Promise<void> }> = [];
  try {
    // The account, pixel and destination, through a server with no worker.
    const service = await startBenchService(databaseUrl, { ...env, TRACKWAY_WORKER: 'false' });
    processes.push(service.running);
    const post = async (url: string, path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res;
    };
    await post(service.running.url, `/v1/pixels/${service.pixelId}/destinations`, {
      type: 'meta',
      config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
    });

    // 1. Throughput: the backlog, in batches of 1,000, with no worker running.
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < backlog) {
          const start = next;
          next += 1000;
          const batch = Array.from({ length: Math.min(1000, backlog - start) }, (_, i) => ({
            pixel_id: service.pixelId,
            event_name: 'Lead',
            event_id: `tp-${start + i}`,
            ...websiteEvent(`p${start + i}`),
          }));
          await post(service.running.url, '/v1/track/batch', { events: batch });
        }
      }),
    );
    await service.running.stop();
    const worker = await startProcess(
      process.execPath,
      [BIN, 'worker'],
      { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env },
      /(Trackway delivery worker running)/,
    );
    processes.push(worker);
    // Stops waiting when nothing has arrived for 30 s (a stalled or skipping engine), rather
    // than sitting out a long deadline.
    let seen = 0;
    let lastProgress = Date.now();
    while (arrivals.size < backlog && Date.now() - lastProgress < 30_000) {
      await sleep(50);
      if (arrivals.size !== seen) [seen, lastProgress] = [arrivals.size, Date.now()];
    }
    const times = [...arrivals.values()];
    const seconds = (Math.max(...times) - Math.min(...times)) / 1000;
    const drained = arrivals.size;
    await worker.stop();

    // 2. Latency: the forwarding worker inside the API process, woken by each commit.
    arrivals.clear();
    const api = await startProcess(
      process.execPath,
      [BIN, 'serve'],
      { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'warn', ...env },
      /Trackway is listening on (\S+)/,
    );
    processes.push(api);
    const sentAt = new Map<string, number>();
    const started = performance.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < events; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const eventId = `lat-${i}`;
      sentAt.set(eventId, Date.now());
      inflight.push(
        post(api.url, '/v1/track', {
          pixel_id: service.pixelId,
          event_name: 'Lead',
          event_id: eventId,
          ...websiteEvent(`l${i}`),
        }),
      );
    }
    await Promise.all(inflight);
    const until = Date.now() + 60_000;
    while (arrivals.size < events && Date.now() < until) await sleep(20);
    const latencies = [...sentAt]
      .filter(([id]) => arrivals.has(id))
      .map(([id, at]) => arrivals.get(id)! - at)
      .sort((a, b) => a - b);

    const rows = [
      {
        measure: `events/s forwarded (${backlog} waiting, one worker)`,
        value: Math.round((drained - 1) / seconds),
        target: values.store === 'sqlite' ? '≥ 20000' : '≥ 10000',
      },
      { measure: 'events of the backlog at Meta', value: drained, target: String(backlog) },
      {
        measure: `commit-to-platform p50 (ms), ${rate} events/s`,
        value: percentile(latencies, 50),
        target: '≤ 1500',
      },
      { measure: 'commit-to-platform p99 (ms)', value: percentile(latencies, 99), target: '' },
      { measure: 'resent and deduplicated by Meta', value: meta.duplicates, target: '' },
    ];
    console.log(
      `\nForwarding to a local Meta (${values.store}${pinned ? ', pinned' : ', not pinned'})\n`,
    );
    console.log(table(rows));
    const name = values.store === 'sqlite' ? 'forwarding' : `forwarding-${values.store}`;
    console.log(`\nresults: ${saveResult(name, { backlog, events, rate, pinned, rows })}`);
  } finally {
    for (const p of processes) await p.stop();
    await meta.close();
  }
}

if (values.store === 'postgres') {
  await withSchema(main);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-fw-'));
  try {
    await main(`sqlite:${join(dir, 'bench.db')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
