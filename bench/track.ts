/**
 * POST /v1/track throughput of the real service (its own process, SQLite file, every check
 * on) next to a bare node:http server parsing the same JSON, loaded the same way in the same
 * run. Prints req/s, p50/p99 latency, peak RSS and the ratio service ÷ baseline.
 *
 *   npm run bench -- [--seconds 10] [--connections 100]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  load,
  peakRssMb,
  purchaseEvent,
  saveResult,
  startBenchService,
  startProcess,
  table,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const BASELINE = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'bench.db')}` };
  try {
    const baseline = await startProcess(process.execPath, [BASELINE], {}, /listening on (\S+)/);
    const base = await load({
      url: `${baseline.url}/v1/track`,
      body: (i) => purchaseEvent('px_bench', i),
      seconds,
      connections,
    });
    const baseRss = peakRssMb(baseline.child.pid!);
    await baseline.stop();

    // An enterprise account with custom limits it never reaches: rate limiting runs, refuses
    // nothing (a pro account's 500/min would turn the run into 429s).
    const service = await startBenchService(env.DATABASE_URL);
    const { headers, pixelId } = service;
    const svc = await load({
      url: `${service.running.url}/v1/track`,
      headers,
      body: (i) => purchaseEvent(pixelId, i),
      seconds,
      connections,
    });
    const svcRss = peakRssMb(service.running.child.pid!);
    await service.running.stop();

    const rows = [
      {
        server: 'bare node:http (baseline)',
        'req/s': base.requestsPerSecond,
        'p50 ms': base.p50,
        'p99 ms': base.p99,
        'peak RSS MB': baseRss,
        'non-2xx': base.non2xx,
        ratio: '1.00',
      },
      {
        server: 'trackway POST /v1/track (SQLite)',
        'req/s': svc.requestsPerSecond,
        'p50 ms': svc.p50,
        'p99 ms': svc.p99,
        'peak RSS MB': svcRss,
        'non-2xx': svc.non2xx,
        ratio: (svc.requestsPerSecond / base.requestsPerSecond).toFixed(2),
      },
    ];
    console.log(
      `\nPOST /v1/track, ${connections} connections, ${seconds} s each, same body shape\n`,
    );
    console.log(table(rows));
    console.log(`\nresults: ${saveResult('track', { seconds, connections, rows })}`);
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
