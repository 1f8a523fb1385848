/** Shared pieces of the benchmarks: processes, load generation, measurements, output. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

export interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts a process and resolves when it prints `pattern` (whose first group is the URL). */
export async function startProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  pattern: RegExp,
): Promise<Running> {
  const child = spawn(command, args, {
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
  };
}

const luaString = (value: string) => `[==[${value}]==]`;

async function loadWithWrk(options: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'trackway-wrk-'));
  const script = join(dir, 'post.lua');
  const headers = { 'content-type': 'application/json', ...options.headers };
  // Each wrk thread numbers its own requests; the thread id keeps the numbers apart.
  writeFileSync(
    script,
    `local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end
local counter = 0
local run = ${luaString(runToken())}
local template = ${luaString(options.template)}
local headers = {}
${Object.entries(headers)
  .map(([k, v]) => `headers[ ${luaString(k)} ] = ${luaString(v)}`)
  .join('\n')}
request = function()
  counter = counter + 1
  local body = (string.gsub(template, "__N__", run .. "t" .. tostring(tid) .. "x" .. tostring(counter)))
  return wrk.format("POST", nil, headers, body)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
`,
  );
  const connections = options.connections ?? 100;
  const child = spawn(
    'wrk',
    [
      '-t',
      String(Math.min(2, connections)),
      '-c',
      String(connections),
      '-d',
      `${options.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      script,
      options.url,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  await once(child, 'exit');
  rmSync(dir, { recursive: true, force: true });
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk printed no result: ${out}`);
  const [requests, durationUs, p50Us, p99Us, non2xx, errors] = m.slice(1).map(Number) as [
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
  };
}

async function loadWithAutocannon(options: LoadOptions): Promise<LoadResult> {
  const run = runToken();
  let i = 0;
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    connections: options.connections ?? 100,
    duration: options.seconds,
    headers: { 'content-type': 'application/json', ...options.headers },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: options.template.replaceAll('__N__', `${run}x${i++}`),
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
  };
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

const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

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
): Promise<BenchService> {
  const base = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env };
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
        [...nodeArgs, BIN, 'serve'],
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
