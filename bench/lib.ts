/** Shared pieces of the benchmarks: processes, load generation, measurements, output. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

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

/** Peak resident memory of a process, in MB (Linux /proc). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** POSTs JSON bodies made by `body(i)` (a fresh event_id each) for `seconds`, 100 connections. */
export async function load(options: {
  url: string;
  headers?: Record<string, string>;
  body: (i: number) => string;
  seconds: number;
  connections?: number;
}): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    connections: options.connections ?? 100,
    duration: options.seconds,
    headers: { 'content-type': 'application/json', ...options.headers },
    requests: [
      {
        setupRequest: (request) => ({ ...request, body: options.body(i++) }),
      },
    ],
  });
  return {
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

const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

export interface BenchService {
  running: Running;
  headers: Record<string, string>;
  pixelId: string;
}

/**
 * `trackway serve` on a fresh SQLite file with `env` on top, its first-run account made an
 * enterprise account with custom limits no benchmark reaches (contract §2): every check still
 * runs, nothing is refused. Returns the key's headers and a new pixel.
 */
export async function startBenchService(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<BenchService> {
  const base = { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'warn' };
  const running = await startProcess(
    process.execPath,
    [BIN, 'serve'],
    { ...base, ...env },
    /Trackway is listening on (\S+)/,
  );
  const key = /^ {2}(tw_live_\w+)$/m.exec(running.output())![1]!;
  const accountId = /created account (acct_\w+)/.exec(running.output())![1]!;
  const plan = spawnSync(
    process.execPath,
    [
      BIN,
      'plans',
      'set',
      '--account',
      accountId,
      '--plan',
      'enterprise',
      '--requests-per-minute',
      '1000000000',
      '--daily-limit',
      '1000000000000',
    ],
    { env: { ...process.env, ...base }, encoding: 'utf8' },
  );
  if (plan.status !== 0) throw new Error(`plans set failed: ${plan.stderr}`);
  const headers = { authorization: `Bearer ${key}` };
  const res = await fetch(`${running.url}/v1/pixels`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com' }),
  });
  if (res.status !== 201) throw new Error(`pixel create failed: ${res.status} ${await res.text()}`);
  const pixelId = ((await res.json()) as { id: string }).id;
  return { running, headers, pixelId };
}

/** A ~430-byte Purchase, like the events the issue measured with; a new event_id each time. */
export const purchaseEvent = (pixelId: string, i: number) =>
  JSON.stringify({
    pixel_id: pixelId,
    event_name: 'Purchase',
    event_id: `bench-${process.pid}-${Date.now()}-${i}`,
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
