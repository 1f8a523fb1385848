/**
 * What counting rate limits in the primary costs an HTTP process (TRACKWAY_PROCESSES > 1
 * without Redis): CPU per `consume` of this process and of a forked primary stand-in
 * (test/fixtures/shared-limits-host.ts) over the real IPC channel, with the calls of one loop
 * turn sent as one message (as under load: `--concurrency` requests in flight) and one call per
 * message (a request alone), beside the in-process memory limiter.
 *
 *   node --import tsx bench/shared-limits.ts [--calls 100000] [--concurrency 100]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PrimaryLimits } from '../src/cluster/shared-limits.ts';
import type { RateLimiter } from '../src/domain/ports/rate-limiter.ts';
import { MemoryRateLimiter } from '../src/rate-limit/memory.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '100' },
  },
});
const CALLS = Number(values.calls);
const CONCURRENCY = Number(values.concurrency);
const HOST = fileURLToPath(new URL('../test/fixtures/shared-limits-host.ts', import.meta.url));
const QUOTAS = [
  { window: 'minute', limit: 1_000_000_000 },
  { window: 'day', limit: 1_000_000_000 },
] as const;

/** utime + stime of `pid` in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function run(limiter: RateLimiter, inFlight: number, hostPid?: number) {
  const mine = process.cpuUsage();
  const host = hostPid === undefined ? 0 : cpuMs(hostPid);
  let done = 0;
  const now = new Date();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (done < CALLS) {
        done++;
        await limiter.consume('acct:bench', QUOTAS, now);
      }
    }),
  );
  const used = process.cpuUsage(mine);
  const ownUs = (used.user + used.system) / CALLS;
  const hostUs = hostPid === undefined ? 0 : ((cpuMs(hostPid) - host) * 1000) / CALLS;
  return { ownUs, hostUs };
}

const child = fork(HOST, { stdio: 'inherit' });
await once(child, 'spawn');
const shared = new PrimaryLimits({
  send: (message, done) => child.send(message, done),
  on: (event, listener) => child.on(event, listener),
});
const rows: Array<[string, { ownUs: number; hostUs: number }]> = [];
await run(shared, CONCURRENCY, child.pid); // warm-up
rows.push(['memory, in process', await run(new MemoryRateLimiter(), CONCURRENCY)]);
rows.push([`primary, ${CONCURRENCY} in flight`, await run(shared, CONCURRENCY, child.pid)]);
rows.push(['primary, 1 in flight', await run(shared, 1, child.pid)]);
for (const [label, { ownUs, hostUs }] of rows) {
  console.log(
    `${label.padEnd(28)} HTTP process ${ownUs.toFixed(2)} µs, primary ${hostUs.toFixed(2)} µs a call`,
  );
}
child.disconnect();
