/**
 * Live-tail fairness (issue 30 item 1, contract §21), measured against a real `trackway serve`:
 *
 *  A. memory: STALLED streams that never read + EVENTS events of 15 KB; the server's RSS
 *     before, and its peak (VmHWM) after.
 *  B. ingest: STREAMS streams asked for by one key on one pixel (those admitted read
 *     normally), then sequential `POST /v1/track` for a few seconds: p50 / p99.
 *
 *   node --import tsx bench/fairness-live-tail.ts sqlite|postgres [stalled=10] [events=1000] [streams=300]
 *
 * The same file measures an older checkout (it only uses the HTTP API).
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchService, startBenchService, withSchema } from './lib.ts';

const kind = process.argv[2] ?? 'sqlite';
const STALLED = Number(process.argv[3] ?? 10);
const EVENTS = Number(process.argv[4] ?? 1_000);
const STREAMS = Number(process.argv[5] ?? 300);

const rssMb = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
};

function openStream(url: string, headers: Record<string, string>, read: boolean) {
  return new Promise<{ status: number; res: IncomingMessage }>((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      if (read) res.resume();
      else res.pause();
      res.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, res });
    });
    req.on('error', reject);
    req.end();
  });
}

async function newPixel(service: BenchService): Promise<string> {
  const res = await fetch(`${service.running.url}/v1/pixels`, {
    method: 'POST',
    headers: { ...service.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Tail', domain: 'tail.example.com' }),
  });
  return ((await res.json()) as { id: string }).id;
}

async function measure(databaseUrl: string) {
  const service = await startBenchService(databaseUrl, { TRACKWAY_WORKER: 'off' });
  const pid = service.running.child.pid!;
  const base = service.running.url;
  try {
    // A. Streams that never read, and 15 KB events.
    const pixel = await newPixel(service);
    const rssBefore = rssMb(pid, 'VmRSS');
    const stalled = await Promise.all(
      Array.from({ length: STALLED }, () =>
        openStream(`${base}/v1/pixels/${pixel}/events/stream`, service.headers, false),
      ),
    );
    const blob = 'x'.repeat(15_000);
    const perBatch = 30;
    for (let i = 0; i < EVENTS; i += perBatch) {
      const events = Array.from({ length: Math.min(perBatch, EVENTS - i) }, (_, j) => ({
        pixel_id: pixel,
        event_name: 'Purchase',
        event_id: `big-${i + j}`,
        custom_data: { blob },
      }));
      const res = await fetch(`${base}/v1/track/batch`, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      });
      if (res.status !== 200) throw new Error(`batch ${res.status} ${await res.text()}`);
    }
    await new Promise((r) => setTimeout(r, 2_000));
    const memory = {
      stalled_streams: STALLED,
      events_of_15kb: EVENTS,
      rss_before_mb: rssBefore,
      rss_after_mb: rssMb(pid, 'VmRSS'),
      rss_peak_mb: rssMb(pid, 'VmHWM'),
    };
    for (const s of stalled) s.res.destroy();

    // B. Many streams of one key on one pixel, then ingest latency on that pixel.
    const tailed = await newPixel(service);
    const opened = await Promise.all(
      Array.from({ length: STREAMS }, () =>
        openStream(`${base}/v1/pixels/${tailed}/events/stream`, service.headers, true),
      ),
    );
    const admitted = opened.filter((s) => s.status === 200).length;
    const latencies: number[] = [];
    const until = Date.now() + 5_000;
    let n = 0;
    while (Date.now() < until) {
      const t = performance.now();
      const res = await fetch(`${base}/v1/track`, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ pixel_id: tailed, event_name: 'PageView', event_id: `p-${n++}` }),
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - t);
    }
    for (const s of opened) s.res.destroy();
    latencies.sort((a, b) => a - b);
    const at = (p: number) => +(latencies[Math.floor(latencies.length * p)] ?? 0).toFixed(1);
    return {
      store: kind,
      memory,
      ingest: {
        streams_asked: STREAMS,
        streams_admitted: admitted,
        refused_429: opened.filter((s) => s.status === 429).length,
        requests: latencies.length,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
      },
    };
  } finally {
    await service.stop();
  }
}

if (kind === 'sqlite') {
  const dir = mkdtempSync(join(tmpdir(), 'fair-tail-'));
  try {
    console.log(JSON.stringify(await measure(`sqlite:${join(dir, 't.db')}`)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  console.log(JSON.stringify(await withSchema(measure)));
}
