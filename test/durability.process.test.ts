/**
 * "A 200 means committed", checked on the real binary at the level of system calls: strace
 * records the server while it answers tracks one at a time, and for every `200` the trace must
 * show the event's frames written to the WAL, then an fdatasync of that WAL file that began
 * after those writes and finished before the answer, made on a thread other than the event
 * loop's. The unit tests (src/storage/sqlite/wal-sync.test.ts) check the same rule with a flush
 * the test controls; this checks the wiring the unit tests cannot see: the real fd, the real
 * fdatasync, the real order.
 *
 * Needs strace (Debian's package; .ci/run installs it). Without it the suite is skipped with a
 * warning, except under CI, where it fails.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from './harness.ts';
import { type ServerProcess, startServerProcess } from './process.ts';

function straceSkip(): string | false {
  if (spawnSync('strace', ['-V']).error === undefined) return false;
  if (process.env['CI']) throw new Error('strace is missing; CI requires it (.ci/run installs it)');
  process.stderr.write('warning: strace not found; skipping the system-call durability check\n');
  return 'strace not installed';
}

/** One system call as strace -f -tt -T -y printed it, with when it began and ended (µs). */
interface Call {
  tid: number;
  name: string;
  args: string;
  start: number;
  end: number;
}

const micros = (clock: string): number => {
  const [h, m, s] = clock.split(':') as [string, string, string];
  return Math.round(((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1e6);
};

/**
 * Parses strace's output, joining the `<unfinished ...>` and `<... resumed>` halves that
 * several threads produce.
 */
function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<number, Call>();
  for (const line of text.split('\n')) {
    const head = /^(\d+) +(\d\d:\d\d:\d\d\.\d+) (.*)$/.exec(line);
    if (!head) continue;
    const tid = Number(head[1]);
    const at = micros(head[2]!);
    const rest = head[3]!;
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    if (resumed) {
      const call = open.get(tid);
      if (call) {
        // What a read returned is printed only when it returns, on this half.
        call.args += resumed[1];
        call.end = at;
        open.delete(tid);
      }
      continue;
    }
    const call = /^(\w+)\((.*)$/.exec(rest);
    if (!call) continue;
    const entry: Call = { tid, name: call[1]!, args: call[2]!, start: at, end: at };
    if (rest.endsWith('<unfinished ...>')) open.set(tid, entry);
    else {
      const took = /<(\d+\.\d+)>$/.exec(rest);
      entry.end = at + (took ? Math.round(Number(took[1]) * 1e6) : 0);
    }
    calls.push(entry);
  }
  return calls;
}

describe('a 200 from /v1/track follows an fdatasync of the WAL holding the event (strace, real process)', {
  skip: straceSkip(),
}, () => {
  const dir = tempDir();
  const traceFile = join(dir.path, 'trace.txt');
  let server: ServerProcess;
  let strace: ChildProcess;
  let straceExited: Promise<unknown>;
  /** Detaches strace (which leaves the server running) and waits until it is gone. */
  const stopStrace = async () => {
    strace.kill('SIGINT');
    await straceExited;
  };
  let key: string;
  let pixelId: string;

  const track = async (eventId: string) => {
    const res = await fetch(`${server.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pixel_id: pixelId, event_name: 'Purchase', event_id: eventId }),
    });
    assert.equal(res.status, 200, await res.text());
  };

  before(async () => {
    server = await startServerProcess({ DATABASE_URL: `sqlite:${join(dir.path, 't.db')}` });
    key = /(tw_live_[0-9A-Za-z]{49})/.exec(server.output())![1]!;
    const res = await fetch(`${server.url}/v1/pixels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shop', domain: 'shop.example.com' }),
    });
    pixelId = ((await res.json()) as { id: string }).id;
    strace = spawn(
      'strace',
      [
        ...['-f', '-tt', '-T', '-y', '-s', '32', '-o', traceFile],
        ...['-e', 'trace=read,write,writev,pwrite64,fsync,fdatasync'],
        ...['-p', String(server.child.pid)],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    // Taken at once: strace may end by the signal (exitCode stays null), and a later
    // once('exit') would then wait forever.
    straceExited = once(strace, 'exit');
    // strace reports on stderr once it holds every thread of the process.
    await new Promise<void>((resolve, reject) => {
      let said = '';
      strace.stderr!.on('data', (d) => {
        said += d;
        if (/attached/.test(said)) resolve();
      });
      strace.once('exit', (code) => reject(new Error(`strace exited ${code}: ${said}`)));
    });
  });

  after(async () => {
    await stopStrace();
    // The trace was the point; SIGKILL spares waiting for a graceful drain.
    await server.stop('SIGKILL');
    dir.remove();
  });

  it('shows, for every answer, the WAL written, then flushed off the event loop, then the 200', async () => {
    const count = 20;
    for (let i = 0; i < count; i++) await track(`durable-${i}`);
    await stopStrace();

    const calls = parseTrace(readFileSync(traceFile, 'utf8'));
    const loop = server.child.pid!;
    const onWal = (c: Call) => /-wal>/.test(c.args.split(',')[0]!);
    const requests = calls.filter((c) => c.name === 'read' && c.args.includes('POST /v1/track'));
    const answers = calls.filter(
      (c) => (c.name === 'writev' || c.name === 'write') && c.args.includes('HTTP/1.1 200'),
    );
    const walWrites = calls.filter((c) => c.name === 'pwrite64' && onWal(c));
    const flushes = calls.filter((c) => (c.name === 'fdatasync' || c.name === 'fsync') && onWal(c));
    assert.equal(requests.length, count, 'every request traced');
    assert.equal(answers.length, count, 'every answer traced');

    for (let i = 0; i < count; i++) {
      const asked = requests[i]!.start;
      const answered = answers[i]!.start;
      assert.ok(asked < answered);
      const written = walWrites.filter((w) => w.start > asked && w.start < answered);
      assert.ok(written.length > 0, `request ${i}: its commit wrote the WAL`);
      const lastWrite = Math.max(...written.map((w) => w.end));
      const covering = flushes.filter((f) => f.start >= lastWrite && f.end <= answered);
      assert.ok(
        covering.length > 0,
        `request ${i}: no WAL flush between its last WAL write and its 200`,
      );
      assert.ok(
        covering.every((f) => f.tid !== loop),
        `request ${i}: the flush ran on the event loop's thread (${loop}): ${JSON.stringify(covering)}`,
      );
      const onLoop = flushes.filter((f) => f.tid === loop && f.start > asked && f.end < answered);
      assert.deepEqual(onLoop, [], `request ${i}: the event loop itself flushed`);
    }
  });
});
