/** A real `trackway serve` for the client's suites: its own SQLite file and account. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir } from '../../../test/harness.ts';
import { runCli, type ServerProcess, startServerProcess } from '../../../test/process.ts';

/** Starting tsx-compiled servers while the whole suite runs on 2 shared cores can be slow. */
const START_TIMEOUT_MS = 90_000;

export interface TestServer {
  env: Record<string, string>;
  server: ServerProcess;
  accountId: string;
  apiKey: string;
  /** Kills the process (no drain) and starts a new one on the same port and file. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestServer(
  limits: { requestsPerMinute: number; dailyLimit: number } = {
    requestsPerMinute: 1_000_000,
    dailyLimit: 100_000_000,
  },
  extraEnv: Record<string, string> = {},
): Promise<TestServer> {
  const dir = tempDir('trackway-client-');
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'trackway.db')}`, ...extraEnv };
  // The account exists before the first start, so no first-run account is made.
  const made = await runCli(
    ['accounts', 'create', '--name', 'Client', '--plan', 'enterprise', '--json'],
    env,
  );
  assert.equal(made.code, 0, made.stderr);
  const { account_id, api_key } = JSON.parse(made.stdout) as {
    account_id: string;
    api_key: string;
  };
  const set = await runCli(
    [
      'plans',
      'set',
      '--account',
      account_id,
      '--requests-per-minute',
      String(limits.requestsPerMinute),
      '--daily-limit',
      String(limits.dailyLimit),
    ],
    env,
  );
  assert.equal(set.code, 0, set.stderr);
  const running: TestServer = {
    env,
    server: await startServerProcess(env, START_TIMEOUT_MS),
    accountId: account_id,
    apiKey: api_key,
    async restart() {
      const port = new URL(running.server.url).port;
      await running.server.stop('SIGKILL');
      running.server = await startServerProcess({ ...env, PORT: port }, START_TIMEOUT_MS);
    },
    async stop() {
      await running.server.stop('SIGKILL');
      dir.remove();
    },
  };
  return running;
}
