/**
 * Where the forwarding worker's CPU goes while it drains a backlog: a .cpuprofile of the
 * `trackway worker` process (`npm run bench:forwarding -- --profile DIR`) charged to the
 * stages of one batch, in ms per 1,000 events. Each sample is charged by its stack, from the
 * running function outwards: the first frame a rule below recognises decides. Only samples
 * between the first and the last batch count (start-up's module loading is left out).
 *
 * Driver work that runs in socket callbacks (pg's protocol parsing, undici's response parsing)
 * has none of our frames above it: it gets rows of its own.
 *
 *   node --import tsx bench/forwarding-stages.ts FILE.cpuprofile --events N
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CpuProfile } from './cpu-stages.ts';
import { table } from './lib.ts';

export const FORWARDING_STAGES = [
  'claim (due check + lease)',
  'load events + match keys',
  'build payloads',
  'JSON of the request',
  'undici send + answer',
  'classify answer, outcomes',
  'settle (jobs, ledger, outbox)',
  'pg protocol (socket callbacks)',
  'garbage collection',
  'native, outside JS',
  'other (event loop, promises)',
] as const;
type Stage = (typeof FORWARDING_STAGES)[number] | 'idle';
interface Frame {
  functionName: string;
  url: string;
}

const has = (p: string, ...parts: string[]) => parts.some((part) => p.includes(part));
const RULES: Array<[Stage, (f: Frame, p: string) => boolean]> = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['native, outside JS', (f) => f.functionName === '(program)'],
  [
    'JSON of the request',
    (f, p) => has(p, 'delivery/platform-sender') && f.functionName === 'serialize',
  ],
  [
    'undici send + answer',
    (_, p) => has(p, 'delivery/platform-sender', '/undici/', 'node:internal/deps/undici'),
  ],
  [
    'claim (due check + lease)',
    (f, p) =>
      has(p, '/forwarding.') &&
      ['claim', 'activeDestinations', 'nextDueAt', 'claimNext'].includes(f.functionName),
  ],
  ['load events + match keys', (f, p) => has(p, 'forwardable') || f.functionName === 'forwardable'],
  [
    'settle (jobs, ledger, outbox)',
    (f, p) => f.functionName === 'settle' || has(p, '/outbox.', '/wal-sync.'),
  ],
  ['classify answer, outcomes', (_, p) => has(p, '-response.', 'batch-isolation', 'retry-policy')],
  ['build payloads', (_, p) => has(p, 'domain/forwarding/')],
  ['classify answer, outcomes', (_, p) => has(p, 'delivery/forwarding-worker')],
  ['pg protocol (socket callbacks)', (_, p) => has(p, '/pg/', '/pg-protocol/', '/pg-pool/')],
];

export function forwardingStages(profile: CpuProfile): { stages: Map<Stage, number>; ms: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOfNode = new Map<number, Stage>();
  const stageOf = (id: number): Stage => {
    const known = stageOfNode.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    const own = RULES.find(([, test]) => test(frame, frame.url))?.[0];
    const up = parent.get(id);
    const stage = own ?? (up === undefined ? 'other (event loop, promises)' : stageOf(up));
    stageOfNode.set(id, stage);
    return stage;
  };
  // The window: from the first sample inside a batch to the last.
  const inBatch = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (
        f.url.includes('forwarding-worker') &&
        ['forward', 'forwardBatch'].includes(f.functionName)
      )
        return true;
    }
    return false;
  };
  let first = -1;
  let last = -1;
  profile.samples.forEach((id, i) => {
    if (inBatch(id)) {
      if (first < 0) first = i;
      last = i;
    }
  });
  const stages = new Map<Stage, number>();
  let ms = 0;
  for (let i = Math.max(first, 0); i <= last; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const stage = stageOf(profile.samples[i]!);
    stages.set(stage, (stages.get(stage) ?? 0) + dt);
    if (stage !== 'idle') ms += dt;
  }
  return { stages, ms };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { events: { type: 'string', default: '50000' } },
  });
  const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
  const { stages, ms } = forwardingStages(profile);
  const per = 1000 / Number(values.events);
  const rows = [...FORWARDING_STAGES, 'idle' as const].map((stage) => ({
    stage: stage as string,
    'ms per 1,000 events': ((stages.get(stage) ?? 0) * per).toFixed(1),
    share: stage === 'idle' ? '' : `${(((stages.get(stage) ?? 0) / ms) * 100).toFixed(0)} %`,
  }));
  rows.push({
    stage: 'all but idle',
    'ms per 1,000 events': (ms * per).toFixed(1),
    share: '100 %',
  });
  console.log(table(rows));
}
