/**
 * What match keys (contract §11) add to each event, measured in process, without HTTP: not a
 * throughput bench (those are `npm run bench*`), a focused look at the added work.
 *
 * 1. Ingestion CPU: prepareEvent on the same contact data with and without the four Meta match
 *    keys, and on no user_data at all (the per-platform hashes and the estimate are the rest).
 * 2. SQLite insert: batches of 512 through the store's own group commit (synchronous=FULL,
 *    the WAL flushed as in production), events without a raw-keys row and events with one.
 *
 *   node --import tsx bench/match-keys-cost.ts [--events 20000]
 */
import { parseArgs } from 'node:util';
import { prepareEvent } from '../src/domain/events/track-event.ts';
import { newId } from '../src/domain/ids.ts';
import type { TrackedEvent } from '../src/domain/model.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import { bareEvent, tempDir } from '../test/harness.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' } } });
const N = Number(values.events);

const CONTACT = { email: 'jane.doe@gmail.com', phone: '+1 650 555 1212', country: 'US' };
const KEYS = {
  client_ip_address: '203.0.113.7',
  client_user_agent:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  fbc: 'fb.1.1732473730000.IwAR2xYzAbCdEfGh',
  fbp: 'fb.1.1732473730000.1098115397',
};

function microsPer(label: string, n: number, work: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 2_000); i++) work(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) work(i);
  const us = Number(process.hrtime.bigint() - start) / 1_000 / n;
  console.log(`${label.padEnd(58)} ${us.toFixed(2)} µs/event`);
  return us;
}

const now = new Date();
const body = (i: number, userData?: Record<string, string>) => ({
  pixel_id: 'px_bench',
  event_name: 'Purchase',
  event_id: `e-${i}`,
  value: 10,
  currency: 'USD',
  ...(userData && { user_data: userData }),
});
console.log(`prepareEvent, ${N} events each:`);
const none = microsPer('  no user_data', N, (i) => prepareEvent('acct', body(i), now));
const contact = microsPer('  email, phone, country', N, (i) =>
  prepareEvent('acct', body(i, CONTACT), now),
);
const keyed = microsPer('  email, phone, country + ip, ua, fbc, fbp', N, (i) =>
  prepareEvent('acct', body(i, { ...CONTACT, ...KEYS }), now),
);
console.log(
  `  → match keys add ${(keyed - contact).toFixed(2)} µs over contact data alone (${(contact - none).toFixed(2)} µs for the contact data itself, all platforms' hashes included)`,
);

const dir = tempDir('trackway-mk-cost-');
const store = SqliteStore.open(`${dir.path}/bench.db`);
const accountId = newId('acct');
const pixelId = newId('px');
const BATCH = 512;
async function insertAll(label: string, make: (i: number) => TrackedEvent): Promise<number> {
  const events = Array.from({ length: N }, (_, i) => make(i));
  const start = process.hrtime.bigint();
  for (let i = 0; i < events.length; i += BATCH) {
    await store.events.insertEvents(
      events.slice(i, i + BATCH).map((event) => ({ event, emit: [] })),
    );
  }
  const us = Number(process.hrtime.bigint() - start) / 1_000 / N;
  console.log(`${label.padEnd(58)} ${us.toFixed(2)} µs/event`);
  return us;
}
console.log(`SQLite insertEvents in batches of ${BATCH}, ${N} events each (prepared beforehand):`);
const prep = (tag: string, userData?: Record<string, string>) => (i: number) => ({
  ...prepareEvent(accountId, { ...body(i, userData), pixel_id: pixelId }, now),
  eventId: `${tag}-${i}`,
});
await insertAll('  warm-up', (i) => bareEvent({ accountId, pixelId, eventId: `w-${i}` }));
const plain = await insertAll(
  '  contact data, no raw keys (no event_match_keys row)',
  prep('c', CONTACT),
);
const withRow = await insertAll(
  '  contact data + ip, ua, fbc, fbp (one event_match_keys row)',
  prep('k', { ...CONTACT, ...KEYS }),
);
console.log(`  → the raw-keys row adds ${(withRow - plain).toFixed(2)} µs per event`);
await store.close();
dir.remove();
