/**
 * Start-up failures end the process (issue 15 item 5): the real binary, each way it can fail to
 * start, must exit non-zero with one line naming the variable, having closed what it opened
 * (the test waits for the exit itself: a process kept alive by an open store, a worker timer or
 * a Redis client never gets there). And a closed stdout (`serve | head -5`) neither hangs the
 * process nor makes it deaf to SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './harness.ts';
import { BIN, type CliResult, runCli } from './process.ts';

/** `trackway serve` must exit by itself; one still running after 20 s is killed and fails. */
async function serveMustExit(
  env: Record<string, string>,
  /** A command the server is started through (`setpriv …` to run it as another user). */
  through: string[] = [],
): Promise<CliResult> {
  const [command, ...args] = [...through, process.execPath, BIN, 'serve'];
  const child = spawn(command!, args, {
    env: { ...process.env, LOG_LEVEL: 'info', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(timer);
  assert.equal(signal, null, `the process did not exit by itself:\n${stdout}\n${stderr}`);
  return { code, stdout, stderr };
}

/** Exactly one non-empty line on stderr, and no stack frame. */
function oneLine(result: CliResult): string {
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  assert.equal(lines.length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /^\s+at /m, result.stderr);
  return lines[0]!;
}

describe('trackway serve: start-up failures (real process)', () => {
  const dir = tempDir();
  const sqlite = () => ({ DATABASE_URL: `sqlite:${join(dir.path, `${Math.random()}.db`)}` });
  let taken: Server;
  let takenPort: number;

  before(async () => {
    taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    takenPort = (taken.address() as { port: number }).port;
  });
  after(() => {
    taken.close();
    dir.remove();
  });

  it('exits 1 naming PORT when the port is in use, after opening (and closing) the store', async () => {
    const result = await serveMustExit({ ...sqlite(), PORT: String(takenPort) });
    assert.equal(result.code, 1);
    assert.match(oneLine(result), new RegExp(`^PORT ${takenPort} is already in use`));
  });

  it('exits 1 naming PORT with the worker and a Redis client running too', async () => {
    const result = await serveMustExit({
      ...sqlite(),
      PORT: String(takenPort),
      REDIS_URL: 'redis://127.0.0.1:6379',
      TRACKWAY_WORKER: 'true',
    });
    assert.equal(result.code, 1);
    assert.match(oneLine(result), /^PORT /);
  });

  it('exits 1 naming HOST when it does not resolve, before opening anything', async () => {
    const env = sqlite();
    const result = await serveMustExit({ ...env, HOST: 'no-such-host.invalid' });
    assert.equal(result.code, 1);
    assert.match(oneLine(result), /^HOST "no-such-host.invalid" could not be resolved/);
    assert.equal(result.stdout, '', 'no first-run key: the store was never opened');
  });

  for (const redisUrl of ['redis://x@[::1:6379', 'notaurl']) {
    it(`exits 1 naming REDIS_URL for ${redisUrl}`, async () => {
      const result = await serveMustExit({ ...sqlite(), REDIS_URL: redisUrl });
      assert.equal(result.code, 1);
      assert.match(oneLine(result), /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
      assert.equal(result.stdout, '');
    });
  }

  it('exits 1 naming DATABASE_URL without echoing its password', async () => {
    const result = await serveMustExit({ DATABASE_URL: 'mysql://trackway:hunter2pw@db/trackway' });
    assert.equal(result.code, 1);
    const line = oneLine(result);
    assert.match(line, /^DATABASE_URL must be /);
    assert.ok(!line.includes('hunter2pw'), line);
  });

  it('prints the stack only at LOG_LEVEL=debug', async () => {
    const result = await serveMustExit({
      ...sqlite(),
      PORT: String(takenPort),
      LOG_LEVEL: 'debug',
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^PORT /);
    assert.match(result.stderr, /^\s+at /m);
  });

  it('keeps serving and drains on SIGTERM after its stdout reader went away (serve | head -5)', async () => {
    // A port known in advance: the address line is printed after stdout is gone.
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as { port: number }).port;
    probe.close();
    await once(probe, 'close');
    const child = spawn(process.execPath, [BIN, 'serve'], {
      // debug: every request is logged to stdout, so a write after the reader left is certain.
      env: { ...process.env, ...sqlite(), PORT: String(port), LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    // Read the first five lines, as `head -5` does, then close the pipe.
    let seen = '';
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (d) => {
        seen += d;
        if (seen.split('\n').length > 5) resolve();
      });
    });
    child.stdout!.destroy();
    let health = 0;
    for (let i = 0; i < 100 && health !== 200; i++) {
      health = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (res) => res.status,
        () => 0,
      );
      if (health !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(health, 200, 'still serving after stdout closed');
    // More requests, each logged to the closed stdout at debug.
    for (let i = 0; i < 5; i++) {
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    }
    assert.equal(child.exitCode, null, 'not killed by EPIPE');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    assert.deepEqual([code, signal], [0, null], 'drained and exited 0 on SIGTERM (not SIGKILLed)');
  });
});

describe('npm start (issue 30)', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('stops the server when npm’s own pid gets SIGTERM: the server drains and exits', async () => {
    // Its own process group, so whatever is left (on the old script, the server) can be found.
    const npm = spawn('npm', ['start'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: {
        ...process.env,
        PORT: '0',
        LOG_LEVEL: 'info',
        DATABASE_URL: `sqlite:${join(dir.path, 'npm-start.db')}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    npm.stdout.on('data', (d) => {
      stdout += d;
    });
    npm.stderr.on('data', (d) => {
      stderr += d;
    });
    const npmExited = once(npm, 'exit');
    try {
      const until = Date.now() + 30_000;
      let url: string | undefined;
      while (url === undefined) {
        url = /Trackway is listening on (http:\/\/\S+)/.exec(stdout)?.[1];
        assert.ok(Date.now() < until, `npm start did not start:\n${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      npm.kill('SIGTERM');
      await npmExited;
      // The server must be gone too, not left running without its parent.
      let answering = true;
      for (let i = 0; i < 100 && answering; i++) {
        answering = await fetch(`${url}/healthz`).then(
          () => true,
          () => false,
        );
        if (answering) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(answering, false, 'the server still answers after npm was stopped');
      assert.match(stderr, /^SIGTERM received: draining$/m, 'it drained, as on a direct SIGTERM');
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {}
    }
  });
});

describe('trackway serve: a SQLite file it cannot write (issue 30)', () => {
  const dir = tempDir();
  const frozen: string[] = [];
  after(() => {
    for (const path of frozen) spawnSync('chattr', ['-i', path]);
    dir.remove();
  });

  it('exits 1 at once naming the path for sqlite:/proc/nope/t.db (no endless mkdir)', async () => {
    const started = Date.now();
    const result = await serveMustExit({ DATABASE_URL: 'sqlite:/proc/nope/t.db' });
    assert.equal(result.code, 1);
    assert.match(
      oneLine(result),
      /^SQLite database \/proc\/nope\/t\.db: cannot create the directory \/proc\/nope \(ENOENT: [^)]+\), running as user \S+ \(uid \d+\); /,
    );
    assert.equal(result.stdout, '', 'nothing started');
    console.log(`sqlite:/proc/nope/t.db: exit 1 after ${Date.now() - started} ms`);
  });

  it('exits 1 naming the file and the user when the database is read-only even for root', async (t) => {
    const db = join(dir.path, 'frozen.db');
    const migrated = await runCli(['migrate'], { DATABASE_URL: `sqlite:${db}` });
    assert.equal(migrated.code, 0, migrated.stderr);
    if (spawnSync('chattr', ['+i', db]).status !== 0) {
      assert.ok(!process.env.CI, 'CI: chattr +i must work here');
      return t.skip('chattr +i is not available on this filesystem');
    }
    frozen.push(db);
    const result = await serveMustExit({ DATABASE_URL: `sqlite:${db}` });
    assert.equal(result.code, 1);
    assert.match(
      oneLine(result),
      new RegExp(
        `^SQLite database ${db}: ${db} is not writable \\(EPERM: [^)]+\\), running as user \\S+ \\(uid \\d+\\); `,
      ),
    );
    assert.doesNotMatch(result.stdout, /listening/, 'never "ready"');
  });

  it('exits 1 naming the directory and the user when run as a user who may not write there', async (t) => {
    const root = process.getuid?.() === 0;
    const setpriv = spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;
    if (!root || !setpriv) {
      assert.ok(!process.env.CI, 'CI runs as root with setpriv (util-linux)');
      return t.skip('needs root and setpriv to run the server as nobody');
    }
    const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
    // The checkout and the node binary must be readable by nobody (not so under a 0700 home).
    const probe = spawnSync(asNobody[0]!, [
      ...asNobody.slice(1),
      process.execPath,
      BIN,
      '--version',
    ]);
    if (probe.status !== 0) {
      return t.skip(
        `nobody cannot run ${process.execPath} ${BIN}: ${String(probe.stderr).split('\n')[0]}`,
      );
    }
    // Root's directory, readable by all: nobody may enter it but not write in it.
    chmodSync(dir.path, 0o755);
    const folder = join(dir.path, 'roots');
    mkdirSync(folder, { mode: 0o755 });
    const result = await serveMustExit(
      { DATABASE_URL: `sqlite:${join(folder, 't.db')}` },
      asNobody,
    );
    assert.equal(result.code, 1);
    assert.match(
      oneLine(result),
      new RegExp(
        `^SQLite database ${folder}/t\\.db: cannot create files in its directory ${folder} \\(EACCES: [^)]+\\), running as user \\S+ \\(uid 65534\\); `,
      ),
    );
  });
});
