/**
 * POST /v1/track/batch throughput of the real service (its own process, SQLite file, every
 * check on) next to the bare node:http baseline parsing the same batches, loaded the same way in
 * the same run. Each request carries `--size` events (default 100) with fresh event_ids; the
 * figure that matters is events per second (target: 150,000 into SQLite).
 *
 *   npm run bench:batch -- [--store sqlite|postgres] [--seconds 10] [--connections 10]
 *                          [--size 100]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  load,
  peakRssMb,
  purchaseTemplate,
  saveResult,
  startBenchService,
  startProcess,
  table,
  withSchema,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    size: { type: 'string', default: '100' },
    store: { type: 'string', default: 'sqlite' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const size = Number(values.size);
const BASELINE = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));

/** The same ~430-byte Purchase as bench/track.ts, `size` of them per request, ids all new. */
const batchTemplate = (pixelId: string) => {
  const one = purchaseTemplate(pixelId);
  return `{"events":[${Array.from({ length: size }, (_, k) => one.replace('__N__', `__N__-${k}`)).join(',')}]}`;
};

async function main(databaseUrl: string) {
  const baseline = await startProcess(process.execPath, [BASELINE], {}, /listening on (\S+)/);
  const base = await load({
    url: `${baseline.url}/v1/track/batch`,
    template: batchTemplate('px_bench'),
    seconds,
    connections,
  });
  const baseRss = peakRssMb(baseline.child.pid!);
  await baseline.stop();

  // Full speed with every check on: an enterprise account whose custom limits are out of reach.
  const service = await startBenchService(databaseUrl);
  const url = `${service.running.url}/v1/track/batch`;
  const template = batchTemplate(service.pixelId);
  // A batch answers 200 even when events in it are refused: check one is wholly accepted.
  const probe = await fetch(url, {
    method: 'POST',
    headers: { ...service.headers, 'content-type': 'application/json' },
    body: template.replaceAll('__N__', 'probe'),
  });
  const accepted = ((await probe.json()) as { accepted: number }).accepted;
  if (accepted !== size) throw new Error(`probe batch: ${accepted} of ${size} accepted`);
  const svc = await load({ url, headers: service.headers, template, seconds, connections });
  const svcRss = peakRssMb(service.running.child.pid!);
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
    row(`trackway POST /v1/track/batch (${values.store})`, svc, svcRss),
  ];
  console.log(
    `\nPOST /v1/track/batch, ${size} events per request, ${connections} connections, ${seconds} s each\n`,
  );
  console.log(table(rows));
  console.log(
    `\nresults: ${saveResult(values.store === 'sqlite' ? 'track-batch' : `track-batch-${values.store}`, { seconds, connections, size, rows })}`,
  );
  if (svc.non2xx > 0 || svc.errors > 0) {
    console.error(
      `\n${svc.non2xx} non-2xx responses and ${svc.errors} errors from the service: the figure is not valid`,
    );
    process.exitCode = 1;
  }
}

if (values.store === 'postgres') {
  await withSchema(main);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-'));
  try {
    await main(`sqlite:${join(dir, 'bench.db')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
