/**
 * Server CPU per POST /v1/track for a FIXED number of requests, several builds side by side:
 * the figure that holds on a loaded machine (CPU time, not throughput), and, with --callgrind,
 * the instructions the server executed (valgrind's count does not move with the load at all).
 *
 * Every build (`--roots A,B,…`: checkouts with `dist/` built, e.g. `git archive <commit>` into a
 * scratch directory with node_modules hard-linked) gets its own server on the same store kind,
 * all started at once and pinned to core 1; this process (the client) pins itself to core 0.
 * After `--warm` requests each, the builds are measured in turn, `--rounds` times, `--requests`
 * each time (interleaved: a machine that slows down between rounds slows every build). The
 * client is raw keep-alive sockets, `--connections` of them, each sending its next request when
 * the previous answer is complete, so exactly `--requests` are answered in the window and every
 * one must be a 200. CPU is utime + stime of the server process (all threads) from /proc.
 *
 *   node bench/fixed.mjs --roots /tmp/a,/tmp/b --store sqlite|postgres-redis
 *        [--requests 20000] [--warm 20000] [--rounds 5] [--connections 100]
 *        [--callgrind DIR]   (one build at a time under valgrind; Ir between zero and dump)
 *        [--out NAME]        (also writes bench/results/NAME.json)
 *
 * The account is the same as `npm run bench`'s (enterprise, custom limits nothing reaches:
 * every check runs), the event the same ~430-byte Purchase with a new event_id each.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    roots: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    requests: { type: 'string', default: '20000' },
    warm: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '100' },
    callgrind: { type: 'string' },
    'node-args': { type: 'string', default: '' },
    out: { type: 'string' },
  },
});
const roots = values.roots.split(',');
const REQUESTS = Number(values.requests);
const WARM = Number(values.warm);
const ROUNDS = Number(values.rounds);
const CONNS = Number(values.connections);
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)]);

const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
};

function cli(root, args, env) {
  const run = spawnSync(process.execPath, [join(root, 'bin/trackway.js'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${root}: trackway ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

const scratch = mkdtempSync(join(tmpdir(), 'trackway-fixed-'));
const schemas = [];
const admin = values.store === 'sqlite' ? null : new pg.Client({ connectionString: PG_URL });
if (admin) await admin.connect();

async function startServer(root, n) {
  let databaseUrl;
  const env = { LOG_LEVEL: 'warn' };
  if (values.store === 'sqlite') databaseUrl = `sqlite:${join(scratch, `bench-${n}.db`)}`;
  else {
    const schema = `fixed_${process.pid}_${n}`;
    await admin.query(`CREATE SCHEMA ${schema}`);
    schemas.push(schema);
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    databaseUrl = url.toString();
    if (values.store === 'postgres-redis') env.REDIS_URL = REDIS_URL;
  }
  const base = { DATABASE_URL: databaseUrl, ...env };
  const made = JSON.parse(
    cli(root, ['accounts', 'create', '--name', 'Bench', '--plan', 'enterprise', '--json'], base),
  );
  cli(
    root,
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
  const nodeArgs = values['node-args'] ? values['node-args'].split(' ') : [];
  let argv = [process.execPath, ...nodeArgs, join(root, 'bin/trackway.js'), 'serve'];
  if (values.callgrind) {
    argv = [
      'valgrind',
      '--tool=callgrind',
      `--callgrind-out-file=${values.callgrind}/cg-${n}.%p`,
      '--dump-instr=no',
      '--collect-atstart=yes',
      ...argv,
    ];
  }
  const child = spawn('taskset', ['-c', '1', ...argv], {
    env: { ...process.env, ...base, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`did not start: ${out}`)), 600_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /Trackway is listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const auth = `Bearer ${made.api_key}`;
  const res = await fetch(`${url}/v1/pixels`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com' }),
  });
  if (res.status !== 201) throw new Error(`pixel: ${res.status} ${await res.text()}`);
  const pixelId = (await res.json()).id;
  const u = new URL(url);
  console.log(`${root}: pid ${child.pid} ${url}`);
  return { root, n, child, port: Number(u.port), auth, pixelId, seq: 0, out: () => out };
}

function body(server, i) {
  return JSON.stringify({
    pixel_id: server.pixelId,
    event_name: 'Purchase',
    event_id: `fixed-${process.pid}-${server.n}-${i}`,
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
}

/** Sends exactly `count` requests over CONNS keep-alive sockets; resolves when all answered. */
function drive(server, count) {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let done = 0;
    let open = 0;
    const head = `POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${server.auth}\r\nContent-Type: application/json\r\n`;
    const conns = Math.min(CONNS, count);
    for (let c = 0; c < conns; c++) {
      const sock = connect(server.port, '127.0.0.1');
      sock.setNoDelay(true);
      open++;
      let buf = '';
      const next = () => {
        if (sent >= count) {
          sock.end();
          return;
        }
        const b = body(server, server.seq++);
        sent++;
        sock.write(`${head}Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`);
      };
      sock.setEncoding('latin1');
      sock.on('connect', next);
      sock.on('data', (d) => {
        buf += d;
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const len = Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
          if (buf.length < end + 4 + len) return;
          const status = buf.slice(9, 12);
          if (status !== '200') {
            reject(new Error(`status ${status}: ${buf.slice(0, end + 4 + len)}`));
            return;
          }
          buf = buf.slice(end + 4 + len);
          done++;
          if (done === count) resolve();
          next();
        }
      });
      sock.on('error', reject);
      sock.on('close', () => open--);
    }
  });
}

function callgrindIr(pid, label) {
  // callgrind_control -d writes a dump of what was collected since the last zero.
  spawnSync('callgrind_control', ['-d', label, String(pid)], { encoding: 'utf8' });
  const files = readdirSync(values.callgrind).filter(
    (f) => f.startsWith(`cg-`) && f.includes(`.${pid}.`),
  );
  files.sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  const last = files.at(-1);
  const text = readFileSync(join(values.callgrind, last), 'utf8');
  const m = /^(?:summary|totals): (\d+)/m.exec(text);
  return { file: last, ir: Number(m?.[1]) };
}

const results = new Map(roots.map((r) => [r, []]));
const irs = new Map(roots.map((r) => [r, []]));
const servers = [];
try {
  if (values.callgrind) {
    // Under valgrind one build at a time: each is far slower than the machine.
    for (const [n, root] of roots.entries()) {
      const s = await startServer(root, n);
      try {
        await drive(s, WARM);
        for (let r = 0; r < ROUNDS; r++) {
          spawnSync('callgrind_control', ['-z', String(s.child.pid)]);
          const c0 = cpuMs(s.child.pid);
          await drive(s, REQUESTS);
          const c1 = cpuMs(s.child.pid);
          const { ir, file } = callgrindIr(s.child.pid, `round${r}`);
          irs.get(root).push(ir / REQUESTS);
          results.get(root).push(((c1 - c0) * 1000) / REQUESTS);
          console.log(`${root} round ${r}: ${(ir / REQUESTS).toFixed(0)} Ir/req (${file})`);
        }
      } finally {
        s.child.kill('SIGTERM');
        await new Promise((r) => s.child.once('exit', r));
      }
    }
  } else {
    for (const [n, root] of roots.entries()) servers.push(await startServer(root, n));
    for (const s of servers) await drive(s, WARM);
    for (let r = 0; r < ROUNDS; r++) {
      // Each round in a different order, so no build always follows the same one.
      const order = servers.map((_, i) => servers[(i + r) % servers.length]);
      for (const s of order) {
        const c0 = cpuMs(s.child.pid);
        await drive(s, REQUESTS);
        // The last answers' logs and metrics may still be running: let the server settle.
        await new Promise((res) => setTimeout(res, 50));
        const c1 = cpuMs(s.child.pid);
        results.get(s.root).push(((c1 - c0) * 1000) / REQUESTS);
      }
      console.log(
        `round ${r}: ${roots.map((root) => `${root.split('/').pop()} ${results.get(root).at(-1).toFixed(1)}`).join('  ')}`,
      );
    }
  }
} finally {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await new Promise((r) => (s.child.exitCode === null ? s.child.once('exit', r) : r()));
  }
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  if (admin) await admin.end();
  rmSync(scratch, { recursive: true, force: true });
}
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
console.log(
  `\nstore ${values.store}, ${REQUESTS} requests × ${ROUNDS} rounds, ${CONNS} connections`,
);
for (const root of roots) {
  const v = results.get(root);
  const line = `${root}: CPU µs/req median ${median(v).toFixed(1)} min ${Math.min(...v).toFixed(1)} [${v.map((x) => x.toFixed(1)).join(' ')}]`;
  const i = irs.get(root);
  console.log(
    i.length
      ? `${line}  Ir/req median ${median(i).toFixed(0)} mean ${(i.reduce((a, b) => a + b, 0) / i.length).toFixed(0)} [${i.map((x) => x.toFixed(0)).join(' ')}]`
      : line,
  );
}
if (values.out) {
  const file = new URL(`./results/${values.out}.json`, import.meta.url);
  const data = {
    at: new Date().toISOString(),
    store: values.store,
    requests: REQUESTS,
    warm: WARM,
    rounds: ROUNDS,
    connections: CONNS,
    builds: roots.map((root) => ({
      root,
      cpuUsPerRequest: results.get(root),
      medianCpuUsPerRequest: median(results.get(root)),
      ...(irs.get(root).length > 0 && { irPerRequest: irs.get(root) }),
    })),
  };
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  console.log(`saved ${file.pathname}`);
}
