/**
 * Turns a V8 .cpuprofile (node --cpu-prof) of the service under load into CPU µs per request
 * for each stage of POST /v1/track. Each sample is charged to a stage by its stack: from the
 * running function outwards, the first frame a rule below recognises decides (so JSON.parse
 * called by pino is "logs and metrics", and the same JSON.parse called by the body parser is
 * "body parse"). Frames no rule knows (event emitters, streams, promise plumbing) are passed
 * over. When the stages change (a file moves, a library is swapped), change the rules, then
 * look at the "unattributed" list the report prints.
 *
 * The database and Redis clients share Node's socket code with the HTTP server: a socket write
 * (or read) is charged to the client whose frame is above it in the stack (pg to "storage call",
 * ioredis to "rate limit"), and to the HTTP rules only when none is. Reads that surface in
 * `onStreamRead` before reaching a client's parser cannot be told apart this way; the HTTP
 * server does not read through it (its parser consumes the socket natively), so they are
 * charged to "client sockets (pg, Redis)".
 *
 * Only the main thread is sampled: work on libuv's threads (fdatasync of the WAL, gzip) is not
 * in the profile; the report gives /proc's CPU of the whole process beside it.
 *
 *   node --import tsx bench/cpu-stages.ts FILE.cpuprofile --requests N [--from µs --to µs]
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const STAGES = [
  'HTTP parse and route',
  'auth',
  'rate limit',
  'body parse',
  'validation',
  'hashing',
  'pixel check',
  'browser event (collect)',
  'storage call',
  'client sockets (pg, Redis)',
  'response',
  'logs and metrics',
  'delivery worker',
  'garbage collection',
  'native, outside JS',
  'unattributed',
] as const;
export type Stage = (typeof STAGES)[number];

type Rule = [Stage, (frame: CallFrame, path: string) => boolean];

const inSrc = (path: string, ...parts: string[]) =>
  parts.some((part) => path.includes(`/src/${part}`));
const inModule = (path: string, ...names: string[]) =>
  names.some((name) => path.includes(`/node_modules/${name}/`));
const named = (frame: CallFrame, ...names: string[]) => names.includes(frame.functionName);

/** The database and Redis clients, with what they depend on. */
const DRIVER_RULES: Rule[] = [
  [
    'storage call',
    (_, p) =>
      inModule(
        p,
        'better-sqlite3',
        'pg',
        'pg-protocol',
        'pg-pool',
        'pg-types',
        'pg-int8',
        'postgres-array',
        'postgres-date',
        'postgres-interval',
        'postgres-bytea',
      ),
  ],
  [
    'rate limit',
    (_, p) =>
      inModule(
        p,
        'ioredis',
        '@ioredis/commands',
        'redis-parser',
        'redis-errors',
        'denque',
        'cluster-key-slot',
        'standard-as-callback',
      ),
  ],
];

/** Node's socket plumbing, which the HTTP rules claim unless a client's frame is above it. */
const SHARED_IO = new Set(['node:net', 'node:internal/stream_base_commons']);
const sharedIo = (f: CallFrame, p: string) =>
  SHARED_IO.has(p) ||
  p.startsWith('node:internal/streams/') ||
  named(f, 'writev', 'writeUtf8String', 'writeLatin1String', 'writeBuffer');

/** Checked in order for each frame: the first rule that holds names the frame's stage. */
const RULES: Rule[] = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['native, outside JS', (f) => f.functionName === '(program)'],
  // src/: by file, and by function where one file holds several stages.
  ['auth', (_, p) => inSrc(p, 'http/auth.ts', 'domain/accounts/')],
  ['rate limit', (_, p) => inSrc(p, 'rate-limit/', 'http/rate-limit.ts')],
  [
    'body parse',
    (f, p) =>
      inSrc(p, 'http/content-encoding.ts') ||
      (inSrc(p, 'http/app.ts') &&
        named(f, 'parseJson', 'needsSecureParse', 'nestedTooDeep', 'openings')),
  ],
  ['response', (f, p) => inSrc(p, 'http/app.ts') && named(f, 'setStandardHeaders')],
  ['hashing', (_, p) => inSrc(p, 'domain/events/user-data.ts', 'domain/events/phone.ts')],
  [
    'validation',
    (f, p) =>
      inSrc(
        p,
        'domain/validation.ts',
        'domain/events/schemas.ts',
        'domain/events/standard-events',
      ) ||
      (inSrc(p, 'http/route-kit.ts') && f.functionName !== 'contextOf') ||
      // prepareChecked is prepareEvent's body (until 2026-11-27 charged to the storage call).
      (inSrc(p, 'domain/events/track-event.ts') &&
        named(f, 'prepareEvent', 'prepareChecked', 'nonFinitePath')),
  ],
  ['pixel check', (f, p) => inSrc(p, 'domain/pixels/') || named(f, 'assertTrackable')],
  // POST /v1/collect's own work: the browser body, its cookies and sites, the bot check.
  [
    'browser event (collect)',
    (_, p) =>
      inSrc(
        p,
        'domain/collect/',
        'http/routes/collect.',
        'http/collect-kit.ts',
        'http/bot-check.ts',
      ),
  ],
  ['response', (f, p) => inSrc(p, 'domain/events/track-event.ts') && named(f, 'trackResponse')],
  ['storage call', (_, p) => inSrc(p, 'storage/', 'domain/events/track-event.ts')],
  ['response', (_, p) => inSrc(p, 'http/errors.ts')],
  ['logs and metrics', (_, p) => inSrc(p, 'logger.ts', 'http/lazy-logger.ts', 'http/metrics.ts')],
  ['delivery worker', (_, p) => inSrc(p, 'delivery/', 'domain/webhooks/')],
  ['HTTP parse and route', (_, p) => inSrc(p, 'http/')],
  // The issue 21 experiment (bench/raw-track-server.mjs): its own few functions.
  ['response', (f, p) => p.endsWith('/bench/raw-track-server.mjs') && named(f, 'respond', 'fail')],
  ['body parse', (f, p) => p.endsWith('/bench/raw-track-server.mjs') && named(f, 'readBody')],
  ['rate limit', (f, p) => p.endsWith('/bench/raw-track-server.mjs') && named(f, 'headers')],
  ['HTTP parse and route', (_, p) => p.endsWith('/bench/raw-track-server.mjs')],
  // Libraries.
  ...DRIVER_RULES,
  ['hashing', (_, p) => inModule(p, 'libphonenumber-js')],
  ['browser event (collect)', (_, p) => inModule(p, 'isbot', 'tldts', 'tldts-core')],
  ['validation', (_, p) => inModule(p, '@sinclair/typebox', 'ajv')],
  [
    'body parse',
    (_, p) => inModule(p, 'secure-json-parse') || /content-?type-?parser\.js$/i.test(p),
  ],
  ['logs and metrics', (_, p) => inModule(p, 'pino', 'prom-client', 'sonic-boom', 'thread-stream')],
  [
    'response',
    (_, p) =>
      inModule(p, 'fast-json-stringify') ||
      /fastify\/lib\/(reply|error-serializer|error-handler|schemas)\.js$/.test(p),
  ],
  ['HTTP parse and route', (_, p) => inModule(p, 'fastify', 'find-my-way', 'avvio')],
  // Node's own modules.
  // crc32 is the API key's checksum (auth), not gzip.
  ['body parse', (f, p) => p === 'node:zlib' && f.functionName !== 'crc32'],
  [
    'response',
    (f, p) =>
      p === 'node:_http_outgoing' ||
      (p === 'node:internal/stream_base_commons' && f.functionName.startsWith('write')) ||
      named(f, 'writev', 'writeUtf8String', 'writeLatin1String', 'writeBuffer', 'writeHead'),
  ],
  [
    'HTTP parse and route',
    (f, p) =>
      ['node:_http_server', 'node:_http_common', 'node:_http_incoming', 'node:net'].includes(p) ||
      p === 'node:internal/stream_base_commons' ||
      named(f, 'execute'),
  ],
];

function pathOf(frame: CallFrame): string {
  const path = frame.url.startsWith('file://') ? new URL(frame.url).pathname : frame.url;
  // The service runs from its build (dist/x.js, compiled from src/x.ts): the rules name src/.
  return path.includes('/node_modules/') ? path : path.replace(/\/dist\/(.*)\.js$/, '/src/$1.ts');
}

function stageOf(frame: CallFrame): Stage | undefined {
  const path = pathOf(frame);
  return RULES.find(([, test]) => test(frame, path))?.[0];
}

/** The stage of the database or Redis client frame, if `frame` is one. */
function driverStageOf(frame: CallFrame): Stage | undefined {
  const path = pathOf(frame);
  return DRIVER_RULES.find(([, test]) => test(frame, path))?.[0];
}

export interface StageTable {
  /** µs of main-thread CPU per request, by stage. */
  perRequest: Record<Stage, number>;
  /** All stages together (idle excluded), per request. */
  sampledPerRequest: number;
  /** For each stage, the frames that decided it (or, unattributed, the leaves), largest first. */
  frames: Record<Stage, Array<{ frame: string; us: number }>>;
}

/**
 * Charges each sample taken between `from` and `to` (µs on the profile's clock; the whole
 * profile when left out) to a stage, and divides by `requests`.
 */
export function stageTable(
  profile: CpuProfile,
  requests: number,
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
): StageTable {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  /** A node's stage, and the frame that decided it (the leaf when none did). */
  const stageOfNode = new Map<number, { stage: Stage | 'idle'; by: CallFrame }>();
  const resolve = (id: number): { stage: Stage | 'idle'; by: CallFrame } => {
    const known = stageOfNode.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    let own: Stage | 'idle' | undefined = frame.functionName === '(idle)' ? 'idle' : stageOf(frame);
    if (sharedIo(frame, pathOf(frame))) {
      const client = clientAbove(id);
      if (client) return remember(id, client);
      if (frame.functionName === 'onStreamRead') own = 'client sockets (pg, Redis)';
    }
    let found = own ? { stage: own, by: frame } : undefined;
    if (!found) {
      const up = parent.get(id);
      found = up === undefined ? { stage: 'unattributed', by: frame } : resolve(up);
      if (found.stage === 'unattributed') found = { stage: 'unattributed', by: frame };
    }
    return remember(id, found);
  };
  const remember = (id: number, found: { stage: Stage | 'idle'; by: CallFrame }) => {
    stageOfNode.set(id, found);
    return found;
  };
  /** The nearest database or Redis client frame above `id`, with its stage. */
  const clientOf = new Map<number, { stage: Stage; by: CallFrame } | null>();
  const clientAbove = (id: number): { stage: Stage; by: CallFrame } | undefined => {
    const up = parent.get(id);
    if (up === undefined) return undefined;
    let known = clientOf.get(up);
    if (known === undefined) {
      const frame = byId.get(up)!.callFrame;
      const stage = driverStageOf(frame);
      known = stage ? { stage, by: frame } : (clientAbove(up) ?? null);
      clientOf.set(up, known);
    }
    return known ?? undefined;
  };
  const totals = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const deciding = new Map<Stage, Map<string, number>>(STAGES.map((s) => [s, new Map()]));
  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    // A sample's time delta is the interval before it: charge that interval to it.
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (time < from || time > to) continue;
    const { stage, by } = resolve(profile.samples[i]!);
    if (stage === 'idle') continue;
    totals[stage] += delta;
    const key = `${by.functionName || '(anonymous)'} ${by.url.replace(/^file:\/\/.*?\/(src|dist|node_modules)\//, '$1/')}`;
    const frames = deciding.get(stage)!;
    frames.set(key, (frames.get(key) ?? 0) + delta);
  }
  const perRequest = Object.fromEntries(STAGES.map((s) => [s, totals[s] / requests])) as Record<
    Stage,
    number
  >;
  return {
    perRequest,
    sampledPerRequest: Object.values(perRequest).reduce((a, b) => a + b, 0),
    frames: Object.fromEntries(
      STAGES.map((stage) => [
        stage,
        [...deciding.get(stage)!]
          .map(([frame, us]) => ({ frame, us: Math.round((us / requests) * 100) / 100 }))
          .sort((a, b) => b.us - a.us)
          .slice(0, 12),
      ]),
    ) as StageTable['frames'],
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      requests: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
  });
  if (positionals.length !== 1 || !values.requests) {
    throw new Error('usage: cpu-stages.ts FILE.cpuprofile --requests N [--from µs --to µs]');
  }
  const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
  const result = stageTable(
    profile,
    Number(values.requests),
    values.from ? Number(values.from) : undefined,
    values.to ? Number(values.to) : undefined,
  );
  for (const stage of STAGES) {
    console.log(`${stage.padEnd(24)} ${result.perRequest[stage].toFixed(1).padStart(7)} µs`);
  }
  console.log(
    `${'sampled, all stages'.padEnd(24)} ${result.sampledPerRequest.toFixed(1).padStart(7)} µs`,
  );
}
