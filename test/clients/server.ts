/**
 * A real `trackway serve` for the client suites, on either store: a SQLite file, or a fresh
 * PostgreSQL schema with Redis for the rate limits. Its account is an enterprise one with
 * limits high enough that only the faults a test injects slow the clients down.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  dropSchema,
  freshSchemaName,
  postgresAvailable,
  postgresUrl,
  tempDir,
} from '../harness.ts';
import { runCli, type ServerProcess, startServerProcess } from '../process.ts';
import { TEST_REDIS_URL, testRedis } from '../redis.ts';

export type StoreName = 'sqlite' | 'postgres+redis';

/** Starting servers while other suites share the 2 cores can be slow. */
const START_TIMEOUT_MS = 90_000;

export interface ClientServer {
  store: StoreName;
  server: ServerProcess;
  url: string;
  apiKey: string;
  /** SIGKILL (no drain), then a new process on the same port and store. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** The stores to run on: PostgreSQL + Redis only where both answer (always under CI). */
export async function clientStores(): Promise<StoreName[]> {
  if (!(await postgresAvailable())) return ['sqlite'];
  const redis = await testRedis();
  if (!redis) return ['sqlite'];
  redis.disconnect();
  return ['sqlite', 'postgres+redis'];
}

export async function startClientServer(
  store: StoreName,
  extraEnv: Record<string, string> = {},
): Promise<ClientServer> {
  const dir = tempDir('trackway-clients-');
  const schema = store === 'sqlite' ? undefined : freshSchemaName();
  const env = {
    ...(schema
      ? { DATABASE_URL: postgresUrl(schema), REDIS_URL: TEST_REDIS_URL }
      : { DATABASE_URL: `sqlite:${join(dir.path, 'trackway.db')}` }),
    ...extraEnv,
  };
  const made = await runCli(
    ['accounts', 'create', '--name', 'Clients', '--plan', 'enterprise', '--json'],
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
      '1000000',
      '--daily-limit',
      '100000000',
    ],
    env,
  );
  assert.equal(set.code, 0, set.stderr);
  const first = await startServerProcess(env, START_TIMEOUT_MS);
  const port = new URL(first.url).port;
  const running: ClientServer = {
    store,
    server: first,
    url: first.url,
    apiKey: api_key,
    async kill() {
      await running.server.stop('SIGKILL');
    },
    async restart() {
      running.server = await startServerProcess({ ...env, PORT: port }, START_TIMEOUT_MS);
    },
    async api<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${running.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${api_key}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      assert.ok(res.ok, `${method} ${path} → ${res.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async stop() {
      await running.server.stop('SIGKILL');
      dir.remove();
      if (schema) await dropSchema(schema);
    },
  };
  return running;
}
