/**
 * POST /v1/track/batch throughput of the real service (its own process, SQLite file, every
 * check on) next to the bare node:http baseline parsing the same batches, loaded the same way in
 * the same run. Each request carries `--size` events (default 100) with fresh event_ids; the
 * figure that matters is events per second (target: 150,000 into SQLite).
 *
 *   npm run bench:batch -- [--seconds 10] [--connections 10] [--size 100]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { load, peakRssMb, saveResult, startProcess, table } from './lib.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    size: { type: 'string', default: '100' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const size = Number(values.size);
const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));
const BASELINE = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));

/** The same ~430-byte Purchase as bench/track.ts, `size` of them per request. */
const batch = (pixelId: string, i: number) =>
  JSON.stringify({
    events: Array.from({ length: size }, (_, k) => ({
      pixel_id: pixelId,
      event_name: 'Purchase',
      event_id: `bench-${process.pid}-${i}-${k}`,
      value: 49.99,
      currency: 'USD',
      timestamp: new Date().toISOString(),
      url: 'https://shop.example.com/checkout/complete?order=1001',
      user_data: {
        email: 'jane.doe@example.com',
        phone: '+16505550199',
        first_name: 'Jane',
        country: 'US',
      },
      custom_data: { order_id: 'order-1001', items: 3, coupon: 'WELCOME10' },
    })),
  });

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, PORT: '0', LOG_LEVEL: 'warn' };
  try {
    const baseline = await startProcess(process.execPath, [BASELINE], {}, /listening on (\S+)/);
    const base = await load({
      url: `${baseline.url}/v1/track/batch`,
      body: (i) => batch('px_bench', i),
      seconds,
      connections,
    });
    const baseRss = peakRssMb(baseline.child.pid!);
    await baseline.stop();

    const service = await startProcess(
      process.execPath,
      [BIN, 'serve'],
      env,
      /Trackway is listening on (\S+)/,
    );
    const key = /^ {2}(tw_live_\w+)$/m.exec(service.output())![1]!;
    const accountId = /created account (acct_\w+)/.exec(service.output())![1]!;
    // Full speed with every check on: an enterprise account whose custom limits are out of reach.
    const plan = spawnSync(
      process.execPath,
      [
        BIN,
        'plans',
        'set',
        '--account',
        accountId,
        '--plan',
        'enterprise',
        '--requests-per-minute',
        '100000000',
        '--daily-limit',
        '1000000000',
      ],
      { env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    if (plan.status !== 0) throw new Error(`plans set failed: ${plan.stderr}`);
    const headers = { authorization: `Bearer ${key}` };
    const res = await fetch(`${service.url}/v1/pixels`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com' }),
    });
    const pixelId = ((await res.json()) as { id: string }).id;
    const svc = await load({
      url: `${service.url}/v1/track/batch`,
      headers,
      body: (i) => batch(pixelId, i),
      seconds,
      connections,
    });
    const svcRss = peakRssMb(service.child.pid!);
    await service.stop();

    const row = (server: string, r: typeof base, rss: number) => ({
      server,
      'req/s': r.requestsPerSecond,
      'events/s': r.requestsPerSecond * size,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'peak RSS MB': rss,
      'non-2xx': r.non2xx,
      ratio: (r.requestsPerSecond / base.requestsPerSecond).toFixed(2),
    });
    const rows = [
      row('bare node:http (baseline)', base, baseRss),
      row('trackway POST /v1/track/batch (SQLite)', svc, svcRss),
    ];
    console.log(
      `\nPOST /v1/track/batch, ${size} events per request, ${connections} connections, ${seconds} s each\n`,
    );
    console.log(table(rows));
    console.log(`\nresults: ${saveResult('track-batch', { seconds, connections, size, rows })}`);
    if (svc.non2xx > 0 || svc.errors > 0) {
      console.error(
        `\n${svc.non2xx} non-2xx responses and ${svc.errors} errors from the service: the figure is not valid`,
      );
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
