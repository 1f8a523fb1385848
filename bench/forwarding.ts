/**
 * Forwarding to a local ad platform (issue 17 targets, stated for Meta), two figures:
 *
 * 1. Throughput (Meta targets ≥ 20,000 events/s on SQLite, ≥ 10,000/s on PostgreSQL): a
 *    backlog of `--backlog` events written while no worker runs, then drained by one
 *    standalone `trackway worker` process (pinned to the server core); events/s from the first
 *    arrival at the local platform to the last. Beside it, the CPU each side spent per event
 *    while draining (/proc of the worker; this process's own CPU, which is the platform
 *    stand-in's validation and bookkeeping), so a figure says which side was the ceiling:
 *    the worker sends one batch at a time per destination, so a batch's wall time is the
 *    worker's CPU plus the stand-in's plus the waits between them.
 * 2. Commit-to-platform latency p50/p99 (target p50 ≤ 1.5 s): events tracked at a steady rate
 *    (`--rate` per second, open loop) through the API process, whose forwarding worker is woken
 *    by each commit; measured from the moment the track request was sent to the event's
 *    arrival at the local platform. `--events 0` skips it.
 *
 * `--platform` picks the stand-in: meta (1,000 events a request), tiktok (1,000), ga4 (≤ 25
 * events a request and one visitor per request, so a bench visitor per event means one event
 * per request). `--profile DIR` runs the worker under `node --cpu-prof` and writes its
 * .cpuprofile to DIR (bench/forwarding-stages.ts attributes it). `--root DIR` runs the worker
 * (and the latency run's server) of the build in DIR instead, to compare designs back to back.
 *
 *   npm run bench:forwarding -- [--store sqlite|postgres] [--platform meta|ga4|tiktok]
 *                               [--backlog 100000] [--events 2000] [--rate 200] [--profile DIR]
 *                               [--root DIR] [--save NAME]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  isPlatform,
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
} from '../src/domain/forwarding/platforms/registry.ts';
import { STAND_INS, type StandIn } from '../test/platforms/stand-ins.ts';
import {
  choosePinning,
  cpuMs,
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
    platform: { type: 'string', default: PLATFORMS[0] },
    profile: { type: 'string' },
    root: { type: 'string' },
    save: { type: 'string' },
    ...PIN_OPTIONS,
  },
});
const pinned = choosePinning(values);
function chosenPlatform(name: string): Platform {
  if (!isPlatform(name)) throw new Error(`--platform ${name}? (${PLATFORMS.join(', ')})`);
  return name;
}
const platform = chosenPlatform(values.platform ?? '');
/** The platform the throughput targets are stated for (issue 17: Meta), the registry's first. */
const targeted = platform === PLATFORMS[0];

/**
 * What a shop's backend sends for a website conversion: without the page's URL and the
 * visitor's user agent Meta refuses a `website` event, so the engine would skip it unsent;
 * GA4 needs the visitor's `ga_client_id` (its client_id).
 */
function websiteEvent(person: string) {
  return {
    action_source: 'website',
    url: `https://shop.example/checkout?p=${person}`,
    user_data: {
      email: `${person}@example.com`,
      client_ip_address: '203.0.113.7',
      client_user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Trackway bench',
      ...standIn.userData(person),
    },
  };
}
// `--root DIR`: the worker of another build (a checkout of an earlier commit, built), to
// compare designs back to back on the same machine; the backlog is written by this one.
const BIN = values.root
  ? join(values.root, 'bin/trackway.js')
  : fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

/** The running stand-in (set by startPlatform, before any event is made). */
let standIn!: StandIn;

/** The stand-in of `platform`, the destination to create for it, and what marks an arrival. */
async function startPlatform(): Promise<{
  server: { close(): Promise<void> };
  events: unknown[];
  duplicates: () => number;
  env: Record<string, string>;
  destination: Record<string, unknown>;
  personOf: (event: unknown) => string;
}> {
  const server = await STAND_INS[platform]();
  standIn = server;
  return {
    server,
    events: server.events,
    duplicates: server.duplicates,
    env: {
      [PLATFORM_MODULES[platform].baseUrl.env]: server.baseUrl,
      // A platform whose access token the service obtains gets it from the stand-in too.
      ...(server.tokenUrl !== undefined && {
        [PLATFORM_MODULES[platform].auth!.tokenUrl.env]: server.tokenUrl,
      }),
    },
    destination: server.config,
    personOf: server.personOf,
  };
}

async function main(databaseUrl: string) {
  const target = await startPlatform();
  // Every event the stand-in keeps (it validated it) goes through its `events.push`: the
  // arrival time of each, by the id the bench gave it (`tp-N` / `lat-N`, or the person for GA4).
  const arrivals = new Map<string, number>();
  const push = target.events.push.bind(target.events);
  target.events.push = (...items: unknown[]) => {
    const at = Date.now();
    for (const item of items) arrivals.set(target.personOf(item), at);
    return push(...items);
  };
  const env = target.env;
  const backlog = Number(values.backlog);
  const events = Number(values.events);
  const rate = Number(values.rate);
  // GA4 keeps no event id: its events are told apart by the person, named after the event id.
  const person = (eventId: string) => (standIn.keepsEventId ? eventId : eventId.replace('-', ''));
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
      type: platform,
      config: target.destination,
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
            ...websiteEvent(person(`tp-${start + i}`)),
          }));
          await post(service.running.url, '/v1/track/batch', { events: batch });
        }
      }),
    );
    await service.running.stop();
    const profiling = values.profile
      ? ['--cpu-prof', '--cpu-prof-dir', values.profile, '--cpu-prof-interval', '250']
      : [];
    const load = loadavg()[0]!;
    const worker = await startProcess(
      process.execPath,
      [...profiling, BIN, 'worker'],
      { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env },
      /(Trackway delivery worker running)/,
    );
    processes.push(worker);
    const workerPid = worker.child.pid!;
    // A platform whose access token the service obtains: its tokens expire every 5 s while
    // the backlog drains, so the figures include renewing them (a 401, a token, a resend).
    const tokens0 = standIn.tokensIssued?.() ?? 0;
    const expiring = standIn.expireTokens
      ? setInterval(() => standIn.expireTokens!(), 5_000)
      : undefined;
    const workerCpu0 = cpuMs(workerPid);
    const ownCpu0 = process.cpuUsage();
    // Stops waiting when nothing has arrived for 30 s (a stalled or skipping engine), rather
    // than sitting out a long deadline.
    let seen = 0;
    let lastProgress = Date.now();
    while (arrivals.size < backlog && Date.now() - lastProgress < 30_000) {
      await sleep(20);
      if (arrivals.size !== seen) [seen, lastProgress] = [arrivals.size, Date.now()];
    }
    const workerCpu = cpuMs(workerPid) - workerCpu0;
    const ownCpuUsage = process.cpuUsage(ownCpu0);
    const ownCpu = (ownCpuUsage.user + ownCpuUsage.system) / 1000;
    const times = [...arrivals.values()];
    const seconds = (Math.max(...times) - Math.min(...times)) / 1000;
    const drained = arrivals.size;
    clearInterval(expiring);
    const renewals = (standIn.tokensIssued?.() ?? 0) - tokens0;
    await worker.stop();

    // 2. Latency: the forwarding worker inside the API process, woken by each commit.
    arrivals.clear();
    const latencies: number[] = [];
    if (events > 0) {
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
        sentAt.set(person(eventId), Date.now());
        inflight.push(
          post(api.url, '/v1/track', {
            pixel_id: service.pixelId,
            event_name: 'Lead',
            event_id: eventId,
            ...websiteEvent(person(eventId)),
          }),
        );
      }
      await Promise.all(inflight);
      const until = Date.now() + 60_000;
      while (arrivals.size < events && Date.now() < until) await sleep(20);
      latencies.push(
        ...[...sentAt].filter(([id]) => arrivals.has(id)).map(([id, at]) => arrivals.get(id)! - at),
      );
      latencies.sort((a, b) => a - b);
    }

    const rows = [
      {
        measure: `events/s forwarded (${backlog} waiting, one worker)`,
        value: Math.round((drained - 1) / seconds),
        target: !targeted ? '' : values.store === 'sqlite' ? '≥ 20000' : '≥ 10000',
      },
      { measure: 'events of the backlog at the platform', value: drained, target: String(backlog) },
      ...(standIn.tokenUrl !== undefined
        ? [
            {
              measure: 'access tokens obtained while draining (expired every 5 s)',
              value: renewals,
              target: '',
            },
          ]
        : []),
      {
        measure: 'worker CPU µs per event forwarded (/proc)',
        value: Math.round((workerCpu * 1000) / drained),
        target: '',
      },
      {
        measure: 'stand-in (bench process) CPU µs per event',
        value: Math.round((ownCpu * 1000) / drained),
        target: '',
      },
      {
        measure: 'worker CPU busy while draining (%)',
        value: Math.round((workerCpu / 1000 / seconds) * 100),
        target: '',
      },
      {
        measure: 'stand-in CPU busy while draining (%)',
        value: Math.round((ownCpu / 1000 / seconds) * 100),
        target: '',
      },
      ...(events > 0
        ? [
            {
              measure: `commit-to-platform p50 (ms), ${rate} events/s`,
              value: percentile(latencies, 50),
              target: targeted ? '≤ 1500' : '',
            },
            {
              measure: 'commit-to-platform p99 (ms)',
              value: percentile(latencies, 99),
              target: '',
            },
          ]
        : []),
      {
        measure: 'resent and deduplicated by the platform',
        value: target.duplicates(),
        target: '',
      },
    ];
    console.log(
      `\nForwarding to a local ${platform} (${values.store}${pinned ? ', pinned' : ', not pinned'}, load ${load.toFixed(2)} at the start of the drain)\n`,
    );
    console.log(table(rows));
    const name =
      values.save ??
      ['forwarding', targeted ? '' : platform, values.store === 'sqlite' ? '' : values.store]
        .filter(Boolean)
        .join('-');
    console.log(
      `\nresults: ${saveResult(name, { platform, store: values.store, root: values.root ?? null, backlog, events, rate, pinned, loadavg1: load, rows })}`,
    );
  } finally {
    for (const p of processes) await p.stop();
    await target.server.close();
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
