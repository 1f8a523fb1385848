/** Shared pieces of the benchmarks: processes, load generation, measurements, output. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import pg from 'pg';

export interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * Pinned runs (issue 21): on a small machine the load generator and the server share the
 * cores, so req/s partly measures how much CPU the load generator left over. Pinned, every
 * server under test (and its baseline, in the same run) runs on core SERVER_CORE and the load
 * generator (and this process) on LOAD_CORE, so neither can steal from the other.
 */
export const SERVER_CORE = '1';
export const LOAD_CORE = '0';
let pinned = false;

/** Pinning is possible: taskset is installed and there are two cores or more. */
export function canPin(): boolean {
  return (
    availableParallelism() >= 2 &&
    spawnSync('taskset', ['--version'], { encoding: 'utf8' }).error === undefined
  );
}

/**
 * The --pin / --no-pin choice of a bench's command line: pinned by default where it can be.
 * Pinning also moves this process (and the autocannon fallback in it) to the load core.
 */
export function choosePinning(flags: { pin?: boolean; 'no-pin'?: boolean }): boolean {
  const possible = canPin();
  if (flags.pin && !possible) throw new Error('--pin needs taskset and at least two cores');
  pinned = flags['no-pin'] ? false : possible;
  if (pinned) spawnSync('taskset', ['-a', '-p', '-c', LOAD_CORE, String(process.pid)]);
  return pinned;
}

/** The flags choosePinning reads, for parseArgs. */
export const PIN_OPTIONS = {
  pin: { type: 'boolean' },
  'no-pin': { type: 'boolean' },
} as const;

export const isPinned = () => pinned;

/** `command args`, run on `core` when pinning is on (taskset execs it: the pid stays its own). */
function onCore(core: string, command: string, args: string[]): [string, string[]] {
  return pinned ? ['taskset', ['-c', core, command, ...args]] : [command, args];
}

/**
 * Starts a process (on the server core when pinned) and resolves when it prints `pattern`
 * (whose first group is the URL).
 */
export async function startProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  pattern: RegExp,
): Promise<Running> {
  const [file, argv] = onCore(SERVER_CORE, command, args);
  const child = spawn(file, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return {
    child,
    url,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

let clockTicks: number | undefined;

/**
 * CPU time a process has used so far (user + system, all its threads), in ms (Linux /proc).
 * Its change over a run divided by the requests served is the server's cost per request,
 * which holds steadier than req/s on a small shared machine.
 */
export function cpuMs(pid: number): number {
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
  // Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** Peak resident memory of a process, in MB (Linux /proc). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  /** Requests answered within the run. */
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests whose (gzip) body had been sent before in the run: their events deduplicate. */
  repeated: number;
}

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  /**
   * The request body; every `__N__` in it becomes a token unique to the request, across every
   * load run of this process (a warm-up and the run after it, or two load processes side by
   * side, never send the same one).
   */
  template: string;
  seconds: number;
  connections?: number;
  /**
   * Send the bodies gzip-compressed (Content-Encoding: gzip). Compressing is too slow for the
   * load generator to do per request, so this many bodies are made (and compressed) before the
   * run, each with its own tokens, and sent in turn; a run that needs more sends some twice
   * and says how many in `repeated`. Size it from an earlier run's rate.
   */
  gzipBodies?: number;
  /**
   * Give each request its own `X-Forwarded-For` (10.x.y.z from its number), so that a
   * per-client-IP limit (browser collection: 120 a minute) sees a crowd of visitors, as in
   * production, instead of one address. The server must trust one proxy.
   */
  forwardedFor?: boolean;
}

let loadRuns = 0;

/** A prefix no other load run (of this or an earlier bench process) uses. */
function runToken(): string {
  loadRuns += 1;
  return `${process.pid}r${Date.now()}r${loadRuns}`;
}

let wrkChecked: boolean | undefined;

/**
 * wrk (Debian's package) is the load tool: written in C, it leaves the cores to the servers
 * being measured. Installed on first use when missing (as root); autocannon, in this process,
 * is the fallback.
 */
export function haveWrk(): boolean {
  if (wrkChecked !== undefined) return wrkChecked;
  const found = () => spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
  if (!found() && process.getuid?.() === 0) {
    console.error('wrk is missing: installing it with apt-get (Debian package "wrk")');
    spawnSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'ignore' });
  }
  wrkChecked = found();
  if (!wrkChecked) console.error('wrk not available: falling back to autocannon');
  return wrkChecked;
}

/** POSTs `template` bodies (each with a fresh number) for `seconds`, 100 connections by default. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  return haveWrk() ? loadWithWrk(options) : loadWithAutocannon(options);
}

/** Loads several servers at once (one load process each) and adds their figures up. */
export async function loadAll(options: LoadOptions[]): Promise<LoadResult> {
  const results = await Promise.all(options.map((o) => load(o)));
  return {
    tool: results[0]!.tool,
    requests: results.reduce((sum, r) => sum + r.requests, 0),
    requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    repeated: results.reduce((sum, r) => sum + r.repeated, 0),
  };
}

/** `count` gzip bodies from `template`, every `__N__` unique to its body (level 1: fast). */
function gzipBodies(template: string, count: number): Buffer[] {
  const run = runToken();
  return Array.from({ length: count }, (_, i) =>
    gzipSync(template.replaceAll('__N__', `${run}z${i}`), { level: 1 }),
  );
}

const luaString = (value: string) => `[==[${value}]==]`;

async function loadWithWrk(options: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-wrk-'));
  const script = join(dir, 'post.lua');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...options.headers,
  };
  const connections = options.connections ?? 100;
  const threads = Math.min(2, connections);
  let bodyLines: string;
  if (options.gzipBodies) {
    // Ready-made bodies: one file of them end to end, one of their lengths; each wrk thread
    // keeps every threads-th one, so no two threads send the same body.
    const bodies = gzipBodies(options.template, options.gzipBodies);
    writeFileSync(join(dir, 'bodies'), Buffer.concat(bodies));
    writeFileSync(join(dir, 'lengths'), bodies.map((b) => b.length).join('\n'));
    headers['content-encoding'] = 'gzip';
    bodyLines = `local bodies = {}
function init(args)
  local lengths = io.open(${luaString(join(dir, 'lengths'))}, "r"):read("*a")
  local data = io.open(${luaString(join(dir, 'bodies'))}, "rb")
  local i = 0
  for n in string.gmatch(lengths, "%d+") do
    local body = data:read(tonumber(n))
    if i % ${threads} == tid - 1 then table.insert(bodies, body) end
    i = i + 1
  end
  data:close()
  mine = #bodies
end
local function nextBody()
  return bodies[((counter - 1) % #bodies) + 1]
end`;
  } else {
    bodyLines = `local run = ${luaString(runToken())}
local template = ${luaString(options.template)}
local function nextBody()
  return (string.gsub(template, "__N__", run .. "t" .. tostring(tid) .. "x" .. tostring(counter)))
end`;
  }
  // Each wrk thread numbers its own requests; the thread id keeps the numbers apart.
  writeFileSync(
    script,
    `local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end
counter = 0
mine = 0
${bodyLines}
local headers = {}
${Object.entries(headers)
  .map(([k, v]) => `headers[ ${luaString(k)} ] = ${luaString(v)}`)
  .join('\n')}
request = function()
  counter = counter + 1
  ${options.forwardedFor ? 'headers["x-forwarded-for"] = string.format("10.%d.%d.%d", tid, math.floor(counter / 256) % 256, counter % 256)' : ''}
  return wrk.format("POST", nil, headers, nextBody())
end
done = function(summary, latency, requests)
  local e = summary.errors
  local repeated = 0
  for _, thread in ipairs(threads) do
    local extra = thread:get("counter") - thread:get("mine")
    if thread:get("mine") > 0 and extra > 0 then repeated = repeated + extra end
  end
  io.write(string.format("RESULT %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout,
    repeated))
end
`,
  );
  const [file, argv] = onCore(LOAD_CORE, 'wrk', [
    '-t',
    String(threads),
    '-c',
    String(connections),
    '-d',
    `${options.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    options.url,
  ]);
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  await once(child, 'exit');
  rmSync(dir, { recursive: true, force: true });
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk printed no result: ${out}`);
  const [requests, durationUs, p50Us, p99Us, non2xx, errors, repeated] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    tool: 'wrk',
    requests,
    requestsPerSecond: Math.round(requests / (durationUs / 1e6)),
    p50: Math.round(p50Us / 100) / 10,
    p99: Math.round(p99Us / 100) / 10,
    non2xx,
    errors,
    repeated,
  };
}

async function loadWithAutocannon(options: LoadOptions): Promise<LoadResult> {
  const run = runToken();
  const bodies = options.gzipBodies ? gzipBodies(options.template, options.gzipBodies) : [];
  let i = 0;
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    connections: options.connections ?? 100,
    duration: options.seconds,
    headers: {
      'content-type': 'application/json',
      ...(options.gzipBodies ? { 'content-encoding': 'gzip' } : {}),
      ...options.headers,
    },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          ...(options.forwardedFor && {
            headers: {
              ...request.headers,
              'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
            },
          }),
          body: options.gzipBodies
            ? bodies[i++ % bodies.length]!
            : options.template.replaceAll('__N__', `${run}x${i++}`),
        }),
      },
    ],
  });
  return {
    tool: 'autocannon',
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    repeated: Math.max(0, i - bodies.length) * (bodies.length > 0 ? 1 : 0),
  };
}

/** One timed load of one server. */
export interface Run {
  result: LoadResult;
  /** Server CPU (all its processes) per request answered during the run, in µs. */
  cpuPerRequest: number;
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Runs `load` and returns its result with the CPU the processes `pids` spent per request. */
/** `pids` and their child processes (a `serve` with TRACKWAY_PROCESSES > 1 forks its own). */
export function withChildren(pids: number[]): number[] {
  return pids.flatMap((pid) => {
    const run = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
    return [pid, ...run.stdout.split('\n').filter(Boolean).map(Number)];
  });
}

export async function withCpu(pids: number[], load: () => Promise<LoadResult>): Promise<Run> {
  const tree = withChildren(pids);
  const spent = () => tree.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const before = spent();
  const result = await load();
  return { result, cpuPerRequest: ((spent() - before) * 1000) / Math.max(1, result.requests) };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function table(rows: Array<Record<string, string | number>>): string {
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return [
    line(columns),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(columns.map((c) => String(r[c])))),
  ].join('\n');
}

export function saveResult(name: string, data: unknown): string {
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}.json`, dir);
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), ...(data as object) }, null, 2)}\n`,
  );
  return file.pathname;
}

const PG_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh PostgreSQL schema at BENCH_DATABASE_URL for `run`, dropped afterwards. */
export async function withSchema<T>(run: (databaseUrl: string) => Promise<T>): Promise<T> {
  const schema = `bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    return await run(url.toString());
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/**
 * ANALYZE every table of the schema in `databaseUrl` (a `withSchema` URL). A fresh schema's
 * planner statistics say "empty" until autovacuum's first pass, which comes a minute or more
 * into a run: before it, the insert's plan is a different one (issue 28's measurements: 848,
 * 2,118, then 2,581 req/s in three runs on one fresh schema). Run after the warm-up, it puts
 * every run in the steady state a running service is in.
 */
export async function analyzeSchema(databaseUrl: string): Promise<void> {
  const schema = new URL(databaseUrl).searchParams.get('schema');
  if (schema === null) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ tablename: string }>(
      'SELECT tablename FROM pg_tables WHERE schemaname = $1',
      [schema],
    );
    for (const { tablename } of rows) await admin.query(`ANALYZE "${schema}"."${tablename}"`);
  } finally {
    await admin.end();
  }
}

const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));
/**
 * Node flags of the issue 35 experiment (no-store-preload.mjs: everything runs but the insert,
 * answered unstored), for the *-no-store modes of track.ts, track-batch.ts and profile.ts.
 */
export const NO_STORE_FLAGS = [
  '--import',
  fileURLToPath(new URL('./no-store-preload.mjs', import.meta.url)),
];

export interface BenchService {
  /** The first instance (the only one unless `instances` was more than 1). */
  running: Running;
  instances: Running[];
  headers: Record<string, string>;
  pixelId: string;
  stop(): Promise<void>;
}

function cli(args: string[], env: Record<string, string>): string {
  const run = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`trackway ${args.join(' ')} failed: ${run.stderr}`);
  return run.stdout;
}

/**
 * `trackway serve` (`instances` processes on one database) with `env` on top, and an
 * enterprise account made with the CLI, with custom limits no benchmark reaches (contract §2):
 * every check on the hot path still runs, nothing is refused. Returns the key's headers and a
 * new pixel.
 */
export async function startBenchService(
  databaseUrl: string,
  env: Record<string, string> = {},
  instances = 1,
  /** Extra node flags for the servers, e.g. --cpu-prof to profile one. */
  nodeArgs: string[] = [],
  /**
   * What the servers run, after node and its flags: `trackway serve` unless told otherwise
   * (bench/raw-track-server.mjs, which prints the same "listening" line).
   */
  entry: string[] = [BIN, 'serve'],
): Promise<BenchService> {
  // One HTTP process per `serve` unless `env` asks for more (TRACKWAY_PROCESSES).
  const base = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', TRACKWAY_PROCESSES: '1', ...env };
  // Made before the server starts, so the SQLite first-run account is never created.
  const made = JSON.parse(
    cli(['accounts', 'create', '--name', 'Bench', '--plan', 'enterprise', '--json'], base),
  ) as { account_id: string; api_key: string };
  cli(
    [
      'plans',
      'set',
      '--account',
      made.account_id,
      '--plan',
      'enterprise',
      '--requests-per-minute',
      '1000000000',
      '--daily-limit',
      '1000000000000',
    ],
    base,
  );
  const running: Running[] = [];
  for (let n = 0; n < instances; n++) {
    running.push(
      await startProcess(
        process.execPath,
        [...nodeArgs, ...entry],
        { ...base, PORT: '0' },
        /Trackway is listening on (\S+)/,
      ),
    );
  }
  const headers = { authorization: `Bearer ${made.api_key}` };
  const res = await fetch(`${running[0]!.url}/v1/pixels`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com' }),
  });
  if (res.status !== 201) throw new Error(`pixel create failed: ${res.status} ${await res.text()}`);
  const pixelId = ((await res.json()) as { id: string }).id;
  return {
    running: running[0]!,
    instances: running,
    headers,
    pixelId,
    async stop() {
      await Promise.all(running.map((r) => r.stop()));
    },
  };
}

/**
 * A ~430-byte Purchase, like the events the issue measured with, as a load template: each
 * request's `__N__` makes its event_id new.
 */
export const purchaseTemplate = (pixelId: string) =>
  JSON.stringify({
    pixel_id: pixelId,
    event_name: 'Purchase',
    event_id: `bench-${process.pid}-${Date.now()}-__N__`,
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
  });

/**
 * Browser events (`POST /v1/collect`): a PageView from the pixel's site as the snippet sends it
 * (text/plain, publishable key, click id and cookies), each with its own event id and visitor,
 * so every request stores an event and updates a visitor identity, and each from its own
 * address (X-Forwarded-For: start the service with TRACKWAY_TRUST_PROXY=1), as a crowd of
 * visitors behind one proxy. `connections` are shared between the service's instances.
 */
export async function collectTargets(
  service: BenchService,
  connections: number,
  seconds: number,
): Promise<LoadOptions[]> {
  const res = await fetch(`${service.running.url}/v1/pixels/${service.pixelId}`, {
    headers: service.headers,
  });
  const { publishable_key: key, domain } = (await res.json()) as {
    publishable_key: string;
    domain: string;
  };
  const template = JSON.stringify({
    key,
    event_name: 'PageView',
    event_id: `bench-${process.pid}-${Date.now()}-__N__`,
    url: `https://${domain}/products/1001?fbclid=IwAR__N__`,
    title: 'Product 1001',
    anonymous_id: 'tw.1732473730000.__N__',
    ids: { fbclid: 'IwAR__N__' },
    cookies: { _fbp: 'fb.1.1732473730000.1098115397', _ga: 'GA1.1.1098115397.1732473730' },
  });
  const share = Math.floor(connections / service.instances.length);
  return service.instances.map((instance) => ({
    url: `${instance.url}/v1/collect`,
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      origin: `https://${domain}`,
      'user-agent':
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    },
    template,
    seconds,
    connections: share,
    forwardedFor: true,
  }));
}
