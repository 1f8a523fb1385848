/**
 * The product as a new user meets it: the real binary, a real SQLite file, real HTTP, the CLI.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from './harness.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

describe('trackway serve + CLI on the embedded default (real process, real HTTP)', () => {
  const dir = tempDir();
  const dbFile = join(dir.path, 'data', 'trackway.db');
  const env = { DATABASE_URL: `sqlite:${dbFile}` };
  let server: ServerProcess;
  let firstKey: string;

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  type Json = Record<string, any>;
  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /**
   * The status GET /v1/pixels settles to after a CLI change. The server reuses key lookups for
   * up to 1 s (the contract's bound), so another process's change is polled for, not expected
   * on the very next request; the exact bound is tested with a fake clock in track.post.test.ts.
   */
  const settledStatus = async (key: string, expected: number) => {
    const giveUpAt = Date.now() + 5_000;
    for (;;) {
      const { status } = await api(key, 'GET', '/v1/pixels');
      if (status === expected || Date.now() > giveUpAt) return status;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  before(async () => {
    server = await startServerProcess(env);
  });
  after(async () => {
    await server.stop('SIGKILL');
    dir.remove();
  });

  it('creates the database file and prints one working key on first run', async () => {
    assert.ok(existsSync(dbFile));
    const match = /^ {2}(tw_live_[0-9A-Za-z]{49})$/m.exec(server.output());
    assert.ok(match, server.output());
    firstKey = match[1]!;
    const res = await api(firstKey, 'GET', '/v1/pixels');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { pixels: [], total: 0, limit: 50, offset: 0 });
  });

  it('runs the README walk-through: create a pixel, track a Purchase, list events', async () => {
    const pixel = await api(firstKey, 'POST', '/v1/pixels', {
      name: 'My shop',
      domain: 'shop.example.com',
    });
    assert.equal(pixel.status, 201);
    const tracked = await api(firstKey, 'POST', '/v1/track', {
      pixel_id: pixel.body['id'],
      event_name: 'Purchase',
      event_id: 'order-1001',
      value: 49.99,
      currency: 'USD',
      user_data: { email: 'Jane.Doe@Example.com', phone: '+1 650 555 0199' },
    });
    assert.equal(tracked.status, 200);
    assert.deepEqual(tracked.body, {
      success: true,
      event_id: 'order-1001',
      message: 'Event tracked',
    });
    const events = await api(firstKey, 'GET', `/v1/pixels/${pixel.body['id']}/events`);
    assert.equal(events.body['total'], 1);
    assert.equal(events.body['events'][0].event_id, 'order-1001');
  });

  it('never writes raw PII to the database file', () => {
    const bytes = ['', '-wal'].map((suffix) =>
      existsSync(dbFile + suffix) ? readFileSync(dbFile + suffix).toString('latin1') : '',
    );
    const everything = bytes.join('');
    assert.ok(everything.length > 0);
    for (const raw of [
      'Jane.Doe@Example.com',
      'jane.doe@example.com',
      '16505550199',
      '650 555 0199',
    ]) {
      assert.ok(!everything.includes(raw), `found ${raw} in the database file`);
    }
  });

  it('serves health, readiness, OpenAPI and docs without a key', async () => {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Json;
    assert.equal(doc['openapi'], '3.1.0');
    assert.ok(doc['paths']['/v1/track']['post']);
    assert.equal((await fetch(`${server.url}/docs`, { redirect: 'manual' })).status < 400, true);
  });

  it('manages accounts, keys and plans from the CLI, and the server honours them within a second', async () => {
    const created = await runCli(
      ['accounts', 'create', '--name', 'Acme', '--plan', 'ultra', '--json'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const { account_id, api_key } = JSON.parse(created.stdout);
    assert.match(account_id, /^acct_[0-9A-Za-z]{16}$/);
    assert.equal((await api(api_key, 'GET', '/v1/pixels')).status, 200);

    const second = await runCli(['keys', 'create', '--account', account_id, '--json'], env);
    assert.equal(second.code, 0, second.stderr);
    const newKey = JSON.parse(second.stdout);
    assert.deepEqual(Object.keys(newKey).sort(), [
      'account_id',
      'api_key',
      'id',
      'key_id',
      'name',
      'scope',
    ]);
    assert.deepEqual([newKey.name, newKey.scope], ['', 'full']);
    assert.equal((await api(newKey.api_key, 'GET', '/v1/pixels')).status, 200);
    // An ingest key from the CLI is held to its scope by the server.
    const ingest = await runCli(
      ['keys', 'create', '--account', account_id, '--name', 'Edge', '--scope', 'ingest', '--json'],
      env,
    );
    assert.equal(ingest.code, 0, ingest.stderr);
    const ingestKey = JSON.parse(ingest.stdout);
    assert.equal((await api(ingestKey.api_key, 'GET', '/v1/pixels')).status, 403);

    const revoked = await runCli(['keys', 'revoke', '--key-id', newKey.key_id, '--json'], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await settledStatus(newKey.api_key, 401), 401);

    const listed = await runCli(['keys', 'list', '--account', account_id, '--json'], env);
    const { keys } = JSON.parse(listed.stdout);
    assert.equal(keys.length, 3);
    for (const key of keys) {
      assert.deepEqual(Object.keys(key).sort(), [
        'created_at',
        'id',
        'key_id',
        'last4',
        'name',
        'prefix',
        'revoked_at',
        'scope',
      ]);
      assert.ok(!listed.stdout.includes(api_key) && !listed.stdout.includes(newKey.api_key));
    }
    assert.equal(
      keys.filter((k: { revoked_at: string | null }) => k.revoked_at !== null).length,
      1,
    );

    const starter = await runCli(
      ['plans', 'set', '--account', account_id, '--plan', 'starter', '--json'],
      env,
    );
    assert.equal(starter.code, 0, starter.stderr);
    assert.equal(await settledStatus(api_key, 403), 403);

    const custom = await runCli(
      ['plans', 'set', '--account', account_id, '--requests-per-minute', '100000'],
      env,
    );
    assert.notEqual(custom.code, 0);
    assert.match(custom.stderr, /only for enterprise/);

    const enterprise = await runCli(
      [
        'plans',
        'set',
        '--account',
        account_id,
        '--plan',
        'enterprise',
        '--requests-per-minute',
        '100000',
        '--daily-limit',
        '50000000',
        '--json',
      ],
      env,
    );
    assert.equal(enterprise.code, 0, enterprise.stderr);
    assert.deepEqual(JSON.parse(enterprise.stdout).limits, {
      requests_per_minute: 100000,
      daily_limit: 50000000,
    });
    assert.equal(await settledStatus(api_key, 200), 200);
  });

  it('reports CLI mistakes on stderr with a non-zero exit', async () => {
    const bad = await runCli(['accounts', 'create', '--name', 'X', '--plan', 'gold'], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--plan must be one of starter, pro, ultra, enterprise/);
    const missing = await runCli(['keys', 'list', '--account', 'acct_nope', '--json'], env);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /No such account: acct_nope/);
    assert.equal(missing.stdout, '');
    // Numbers a 64-bit column cannot hold, or not written in decimal: a usage error (exit 2),
    // never a database error with a stack trace.
    for (const value of ['1e20', '0x10', '1e3', '0', '9007199254740992', '2.5', ' 5']) {
      const limit = await runCli(
        ['plans', 'set', '--account', 'acct_nope', '--daily-limit', value],
        env,
      );
      assert.equal(limit.code, 2, value);
      assert.match(limit.stderr, /--daily-limit must be a whole number from 1 to 9007199254740991/);
      assert.doesNotMatch(limit.stderr, /at .*\.ts:\d+/, 'no stack trace');
    }
  });

  it('drains on SIGTERM with exit 0, and a restart keeps the data and prints no new key', async () => {
    assert.equal(await server.stop('SIGTERM'), 0);
    server = await startServerProcess(env);
    assert.doesNotMatch(server.output(), /tw_live_/);
    const pixels = await api(firstKey, 'GET', '/v1/pixels');
    assert.equal(pixels.body['total'], 1);
  });

  it('applies migrations on demand with `trackway migrate`', async () => {
    const res = await runCli(['migrate', '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout), { migrated: true });
  });
});
