/**
 * The pure pieces of POST /v1/track, timed in process (no HTTP, no storage): what each
 * hot-path change of issue 21 saves, read beside the pinned `npm run bench`. CPU time per call
 * (process.cpuUsage, robust to a busy machine), the least of several rounds.
 *
 *   node --import tsx bench/ingest-micro.ts [--n 20000] [--rounds 5]
 */
import { parseArgs } from 'node:util';
import { authenticateKey } from '../src/domain/accounts/accounts.ts';
import { generateApiKey } from '../src/domain/accounts/api-key.ts';
import { prepareEvent } from '../src/domain/events/track-event.ts';
import type { Account } from '../src/domain/model.ts';
import { isHttpUrl, isIsoDateTime } from '../src/domain/validation.ts';
import { purchaseTemplate } from './lib.ts';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' } },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);

const plain = JSON.parse(purchaseTemplate('px_bench')) as Record<string, unknown>;
const keyed = {
  ...plain,
  action_source: 'website',
  user_data: {
    ...(plain['user_data'] as object),
    client_ip_address: '203.0.113.7',
    client_user_agent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
    fbc: 'fb.1.1732473730000.IwAR2xYzAbCdEfGh',
    fbp: 'fb.1.1732473730000.1098115397',
  },
};
const now = new Date(Date.parse(plain['timestamp'] as string) + 1_000);
const key = generateApiKey();
const found = {
  account: { id: 'acct', plan: 'enterprise', status: 'active' } as unknown as Account,
  keyId: 'key',
  scope: 'full' as const,
};
const lookup = { findByKeyHash: async () => found };

async function cpuMicros(work: (i: number) => unknown): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) await work(i);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / N);
  }
  return best;
}

const cases: Array<[string, (i: number) => unknown]> = [
  ['prepareEvent, bench template', () => prepareEvent('acct', plain, now)],
  ['prepareEvent, + 4 match keys', () => prepareEvent('acct', keyed, now)],
  ['isHttpUrl (bench url)', () => isHttpUrl(plain['url'] as string)],
  ['isIsoDateTime (bench timestamp)', () => isIsoDateTime(plain['timestamp'] as string)],
  ['authenticateKey (checksum + hash)', () => authenticateKey(lookup, key.apiKey)],
];
// Since issue 21 the HTTP layer remembers each header's hash for a second (src/http/auth.ts).
const auth = (await import('../src/http/auth.ts')) as Partial<typeof import('../src/http/auth.ts')>;
if (auth.KeyHashes) {
  const hashes = new auth.KeyHashes({ now: () => new Date() });
  const header = `Bearer ${key.apiKey}`;
  cases.push([
    'authenticateRequest (remembered hash)',
    () => auth.authenticateRequest!(lookup, hashes, header),
  ]);
}
for (const [label, work] of cases) {
  console.log(`${label.padEnd(40)} ${(await cpuMicros(work)).toFixed(2)} µs`);
}
