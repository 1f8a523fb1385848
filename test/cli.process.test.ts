/**
 * The CLI as a shell runs it (real processes, real pipes): output cut short by the reader,
 * the first-run banner, and `--json` on the long-running commands.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from './harness.ts';
import { BIN, startServerProcess } from './process.ts';

const dir = tempDir();
after(() => dir.remove());
const database = (name: string) => `sqlite:${join(dir.path, name, 'trackway.db')}`;

/** Runs `trackway <args>`, resolving with the first stdout line that parses as JSON. */
async function firstJsonLine(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Not captured for the log scan: these lines are the command's output, not logs, and
  // `serve --json` prints the first-run key by design (as `accounts create --json` does).
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stdout}${stderr}`)));
  });
  return { child, line, stderr: () => stderr };
}

describe('trackway CLI in a shell', () => {
  it('`openapi | head -c 300`: a reader that stops early is not an error (no EPIPE crash)', async () => {
    // A real shell pipeline: node's own 'pipe' stdio is a socket pair whose buffer would take
    // the whole document (over 100 KB); a pipe holds 64 KB, so the rest of the write meets
    // the pipe `head` has closed.
    const child = spawn(
      'bash',
      ['-c', '"$0" "$1" openapi | head -c 300 >/dev/null; exit $PIPESTATUS', process.execPath, BIN],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });

  it('prints the first-run banner as one block, and "listening" once', async () => {
    const server = await startServerProcess({
      DATABASE_URL: database('banner'),
      LOG_LEVEL: 'info',
    });
    try {
      // pino writes asynchronously: wait for the log record of the bound address, so that
      // everything printed about listening is in before counting.
      const logged = /"msg":"trackway serving http:\/\/127\.0\.0\.1:\d+ \(sqlite\)"/;
      while (!logged.test(server.output())) await once(server.child.stdout!, 'data');
      const out = server.output();
      const block = /\nFirst run: [\s\S]*?Trackway is listening on \S+\n/.exec(out)?.[0];
      assert.ok(block, out);
      assert.doesNotMatch(block, /^\{/m, 'no log line inside the banner');
      assert.match(block, /export TRACKWAY_URL=http:\/\/127\.0\.0\.1:\d+\n/);
      assert.equal(
        `${out}${server.errors()}`.match(/listening/gi)?.length,
        1,
        `${out}${server.errors()}`,
      );
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('`serve --json` announces itself as one JSON object, first-run key included', async () => {
    const { child, line } = await firstJsonLine(['serve', '--json'], {
      DATABASE_URL: database('serve-json'),
    });
    try {
      const body = JSON.parse(line);
      assert.match(body.listening, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(body.first_run.account_id, /^acct_/);
      assert.match(body.first_run.api_key, /^tw_live_/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('`worker --json` says it runs as JSON, and drains to exit 0 on SIGTERM', async () => {
    const { child, line } = await firstJsonLine(['worker', '--json'], {
      DATABASE_URL: database('worker-json'),
    });
    assert.deepEqual(JSON.parse(line), { worker: 'running', pid: child.pid });
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null]);
  });
});
