/**
 * The storage call of POST /v1/track alone: the events `npm run bench` sends, prepared in
 * process (prepareEvent) with unique ids, then stored through the real store's insertEvent with
 * `--concurrency` calls in flight (as 100 wrk connections keep that many waiting on the group
 * commit). Process CPU µs per event (user + system, the WAL flush's fdatasync included), the
 * least of `--rounds`: robust to a busy machine, so a change to the insert path can be judged
 * without a quiet one. SQLite, or PostgreSQL with `--postgres URL` (only this process's CPU:
 * the server's is not counted).
 *
 *   node --import tsx bench/ingest-store.ts [--n 20000] [--rounds 3] [--concurrency 100]
 *                                           [--postgres postgres://postgres@127.0.0.1:5432/test]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { eventTracked, prepareEvent } from '../src/domain/events/track-event.ts';
import type { Store } from '../src/domain/ports/store.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import { purchaseTemplate } from './lib.ts';
import { accountWithPixel } from './store-fixture.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '100' },
    postgres: { type: 'string' },
  },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);

async function round(store: Store, accountId: string, pixelId: string, tag: string) {
  const template = purchaseTemplate(pixelId);
  const now = new Date();
  const events = Array.from({ length: N }, (_, i) =>
    prepareEvent(accountId, JSON.parse(template.replace('__N__', `${tag}-${i}`)), now),
  );
  let next = 0;
  const written = bytesWritten();
  const writtenByLoop = bytesWritten(`/proc/self/task/${process.pid}/io`);
  const start = process.cpuUsage();
  const worker = async () => {
    while (next < events.length) {
      const event = events[next++]!;
      await store.events.insertEvent(event, [eventTracked(event)]);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(start);
  return {
    cpu: (used.user + used.system) / N,
    bytes: (bytesWritten() - written) / N,
    loopBytes: (bytesWritten(`/proc/self/task/${process.pid}/io`) - writtenByLoop) / N,
  };
}

/**
 * Bytes this process has passed to write(2) (/proc/self/io `wchar`): the WAL pages and the
 * checkpoints' copies, so what a row's size costs the commit, exactly, however busy the
 * machine. (The PostgreSQL server's writes are its own and not counted.) The event loop's
 * thread alone (its /proc task): what it wrote itself, checkpoints off the loop excluded.
 */
function bytesWritten(ioFile = '/proc/self/io'): number {
  const io = readFileSync(ioFile, 'utf8');
  return Number(/wchar: (\d+)/.exec(io)?.[1] ?? Number.NaN);
}

let store: Store;
let cleanup: () => Promise<void>;
if (values.postgres) {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: values.postgres });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(values.postgres);
  url.searchParams.set('options', `-c search_path=${schema}`);
  store = await PostgresStore.open({ url: url.toString() });
  cleanup = async () => {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  };
} else {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-ingest-store-'));
  store = SqliteStore.open(join(dir, 'bench.db'));
  cleanup = async () => {
    await store.close();
    if (process.env.KEEP) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
// PostgresStore.open does not migrate (the service does it at start); SQLite's open already has.
await store.migrate();
const { accountId, pixelId } = await accountWithPixel(store);
await round(store, accountId, pixelId, 'warm');
let best = Number.POSITIVE_INFINITY;
let bytes = Number.POSITIVE_INFINITY;
let loopBytes = Number.POSITIVE_INFINITY;
for (let r = 0; r < ROUNDS; r++) {
  const result = await round(store, accountId, pixelId, `r${r}`);
  best = Math.min(best, result.cpu);
  bytes = Math.min(bytes, result.bytes);
  loopBytes = Math.min(loopBytes, result.loopBytes);
}
console.log(
  `${values.postgres ? 'postgres' : 'sqlite'} insertEvent: ${best.toFixed(1)} µs CPU/event, ${Math.round(bytes)} bytes written/event (${Math.round(loopBytes)} by the loop's thread) (least of ${ROUNDS} rounds of ${N}, ${CONCURRENCY} in flight)`,
);
await cleanup();
