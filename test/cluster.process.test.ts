/**
 * `trackway serve` with TRACKWAY_PROCESSES=2 on PostgreSQL without Redis, as real processes:
 * rate limits exact across the two HTTP processes (counted by the primary), a process killed
 * outright under load loses no acknowledged event and is replaced, and SIGTERM drains every
 * process before the primary exits 0.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Agent } from 'undici';
import {
  dropSchema,
  freshSchemaName,
  postgresSuite,
  postgresUrl,
  TEST_DATABASE_URL,
} from './harness.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

const agent = new Agent({ connections: 200, pipelining: 1 });
const fetchWith = (url: string, init: RequestInit = {}) =>
  // @ts-expect-error undici's dispatcher option is not in the DOM fetch types
  fetch(url, { ...init, dispatcher: agent });

/** The HTTP processes the primary runs now. */
function children(primary: ServerProcess): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(primary.child.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** CPU clock ticks a process has used (utime + stime). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await sleep(left + 50);
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('two HTTP processes on one machine (TRACKWAY_PROCESSES=2, PostgreSQL, no Redis)', async () => {
  const { skip } = await postgresSuite();
  const schema = freshSchemaName();
  const env = { DATABASE_URL: postgresUrl(schema), TRACKWAY_PROCESSES: '2' };
  let server: ServerProcess | undefined;
  let db: pg.Client | undefined;

  const account = async (plan: string) => {
    const made = await runCli(['accounts', 'create', '--name', 'C', '--plan', plan, '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    return JSON.parse(made.stdout) as { account_id: string; api_key: string };
  };

  before(async () => {
    if (skip) return;
    assert.equal((await runCli(['migrate'], env)).code, 0);
    server = await startServerProcess(env, 60_000);
    db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await db?.end();
    if (!skip) await dropSchema(schema);
  });

  it('says it runs two processes, each one listening on the one port', { skip }, () => {
    assert.match(server!.output(), /Trackway is listening on \S+ \(2 processes, postgres\)/);
    assert.equal(children(server!).length, 2);
  });

  it('admits exactly 500 of 1,500 concurrent requests of a pro account, across both processes', {
    skip,
  }, async () => {
    const { api_key } = await account('pro');
    const pids = children(server!);
    const before = pids.map(cpuTicks);
    await awayFromMinuteEnd();
    const statuses = await Promise.all(
      Array.from({ length: 1_500 }, async () => {
        const res = await fetchWith(`${server!.url}/v1/pixels`, {
          headers: { authorization: `Bearer ${api_key}` },
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 500);
    assert.equal(statuses.filter((s) => s === 429).length, 1_000);
    // Both processes answered part of the burst (the primary hands connections round robin):
    // a count kept in each process would have admitted up to 1,000.
    pids.forEach((pid, i) => {
      assert.ok(cpuTicks(pid) - before[i]! >= 2, `process ${pid} served part of the burst`);
    });
    // Whichever process a scrape lands on, /metrics counts both processes' requests.
    for (let scrape = 0; scrape < 4; scrape++) {
      const res = await fetch(`${server!.url}/metrics`, { headers: { connection: 'close' } });
      const text = await res.text();
      const counted = [
        ...text.matchAll(
          /^trackway_http_request_duration_seconds_count\{[^}]*route="\/v1\/pixels"[^}]*\} (\d+)/gm,
        ),
      ]
        .map((m) => Number(m[1]))
        .reduce((a, b) => a + b, 0);
      assert.ok(counted >= 1_500, `scrape ${scrape} counted ${counted} of the 1,500 requests`);
    }
  });

  it('loses no acknowledged event when one process is killed under load, and replaces it', {
    skip,
  }, async () => {
    const { account_id, api_key } = await account('enterprise');
    const set = await runCli(
      [
        'plans',
        'set',
        '--account',
        account_id,
        '--requests-per-minute',
        '1000000',
        '--daily-limit',
        '100000000',
      ],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    const headers = { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' };
    const pixel = await fetchWith(`${server!.url}/v1/pixels`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Kill', domain: 'kill.example.com' }),
    });
    assert.equal(pixel.status, 201);
    const { id: pixelId } = (await pixel.json()) as { id: string };
    const [victim, survivor] = children(server!) as [number, number];
    const acknowledged: string[] = [];
    let failed = 0;
    let killedAt = 0;
    let answeredAfterKill = 0;
    let n = 0;
    const until = Date.now() + 5_000;
    const loop = async () => {
      while (Date.now() < until) {
        const eventId = `kill-${n++}`;
        try {
          const res = await fetchWith(`${server!.url}/v1/track`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ pixel_id: pixelId, event_name: 'Lead', event_id: eventId }),
          });
          await res.arrayBuffer();
          if (res.status === 200) {
            acknowledged.push(eventId);
            if (killedAt > 0) answeredAfterKill++;
          } else assert.ok(res.status < 500 || res.status === 503, `status ${res.status}`);
        } catch {
          failed++; // the connection died with the process: not acknowledged
        }
      }
    };
    const load = Promise.all(Array.from({ length: 40 }, loop));
    await sleep(1_500);
    process.kill(victim, 'SIGKILL');
    killedAt = Date.now();
    await load;
    await waitFor(() => children(server!).length === 2, 'a replacement process');
    const now = children(server!);
    assert.ok(now.includes(survivor) && !now.includes(victim), `processes now ${now}`);
    const stored = await db!.query<{ event_id: string }>(
      `SELECT event_id FROM ${schema}.events WHERE pixel_id = $1`,
      [pixelId],
    );
    const ids = new Set(stored.rows.map((r) => r.event_id));
    const missing = acknowledged.filter((id) => !ids.has(id));
    assert.ok(acknowledged.length > 100, `${acknowledged.length} acknowledged`);
    assert.ok(answeredAfterKill > 0, 'the service kept answering after the kill');
    assert.deepEqual(missing, [], `${missing.length} acknowledged events missing`);
    process.stderr.write(
      `SIGKILL under load: ${acknowledged.length} acknowledged, ${failed} connections lost, 0 missing\n`,
    );
  });

  it('exits 1 with the reason when its processes cannot listen (the port is taken)', {
    skip,
  }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runCli(['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
      assert.equal(run.code, 1);
      assert.match(run.stderr, new RegExp(`PORT ${port} is already in use`));
    } finally {
      taken.close();
    }
  });

  it('drains every process on SIGTERM and exits 0', { skip }, async () => {
    const { api_key } = await account('pro');
    const pids = children(server!);
    const inFlight = Array.from({ length: 100 }, () =>
      fetchWith(`${server!.url}/v1/pixels`, { headers: { authorization: `Bearer ${api_key}` } })
        .then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        })
        .catch(() => 'refused' as const),
    );
    await sleep(20);
    const stopping = performance.now();
    const code = await server!.stop('SIGTERM');
    const drainMs = performance.now() - stopping;
    const statuses = await Promise.all(inFlight);
    assert.equal(code, 0, server!.errors());
    // The agent keeps the answered connections alive: the drain closes them once idle instead
    // of waiting out the keep-alive timeout (72 s), which is what held it before.
    assert.ok(drainMs < 30_000, `drained in ${Math.round(drainMs)} ms`);
    // Answered, or refused as a closing server refuses (503, retry), or the connection closed
    // before the request was read: never a 500, never an answer that was not a whole one.
    const unexpected = statuses.filter((s) => s !== 200 && s !== 503 && s !== 'refused');
    assert.deepEqual(unexpected, []);
    assert.ok(
      statuses.some((s) => s === 200),
      'requests already sent were answered',
    );
    for (const pid of pids) {
      assert.throws(() => process.kill(pid, 0), 'every HTTP process has exited');
    }
  });
});
