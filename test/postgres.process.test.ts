/**
 * The scale-out setup as an operator runs it: two `trackway serve` processes on one
 * PostgreSQL schema, an account made with the CLI, and requests spread over both instances.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dropSchema, freshSchemaName, postgresSuite, postgresUrl } from './harness.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
type Json = Record<string, any>;

// Never skipped under CI: there PostgreSQL must be up, and its absence is a failure.
describe('two trackway processes on one PostgreSQL schema', await postgresSuite(), () => {
  const schema = freshSchemaName();
  const env = { DATABASE_URL: postgresUrl(schema) };
  let servers: ServerProcess[] = [];
  let key: string;
  let cliErrors = '';

  const api = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
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

  before(async () => {
    // Both start at once on an empty schema: the migration lock makes one wait for the other.
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    const created = await runCli(
      ['accounts', 'create', '--name', 'Acme', '--plan', 'pro', '--json'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    cliErrors = created.stderr;
    key = JSON.parse(created.stdout).api_key;
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await dropSchema(schema);
  });

  it('prints no deprecation warning on start or from the CLI (issue 22: pg 9 would break it)', () => {
    for (const server of servers) assert.doesNotMatch(server.errors(), /DeprecationWarning/);
    assert.doesNotMatch(cliErrors, /DeprecationWarning/);
  });

  it('prints no first-run key on PostgreSQL (accounts come from the CLI)', () => {
    for (const server of servers) assert.doesNotMatch(server.output(), /tw_live_/);
  });

  it('shows a pixel created on one instance on the other at once', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const pixel = await api(a, 'POST', '/v1/pixels', { name: 'Shop', domain: 'shop.example.com' });
    assert.equal(pixel.status, 201);
    const seen = await api(b, 'GET', `/v1/pixels/${pixel.body['id']}`);
    assert.equal(seen.status, 200);
    // The GET adds the 7-day match quality (contract §12): null without events.
    assert.deepEqual(seen.body, { ...pixel.body, match_quality_7d: null });
  });

  it('stores exactly one event for 50 concurrent requests with one event_id over both', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const pixelId = (await api(a, 'POST', '/v1/pixels', { name: 'Two', domain: 'two.example.com' }))
      .body['id'];
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api(i % 2 === 0 ? a : b, 'POST', '/v1/track', {
          pixel_id: pixelId,
          event_name: 'Purchase',
          event_id: 'order-42',
          value: i,
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      Array(50).fill(200),
    );
    const firsts = results.filter((r) => r.body['deduplicated'] !== true);
    assert.equal(firsts.length, 1, 'exactly one request stored the event');
    assert.deepEqual(firsts[0]?.body, {
      success: true,
      event_id: 'order-42',
      message: 'Event tracked',
    });
    for (const server of servers) {
      const events = await api(server, 'GET', `/v1/pixels/${pixelId}/events`);
      assert.equal(events.body['total'], 1);
      // The stored event is the one whose request was answered as the first.
      assert.equal(events.body['events'][0].value, results.indexOf(firsts[0]!));
    }
  });
});

describe('PostgreSQL unreachable at boot', () => {
  it('exits non-zero with one clear line, no stack and no password', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const res = await runCli(['migrate'], {
      DATABASE_URL: 'postgres://trackway:s3cret-pw@127.0.0.1:1/trackway',
    });
    assert.notEqual(res.code, 0);
    assert.match(
      res.stderr,
      /^Cannot connect to PostgreSQL at 127\.0\.0\.1:1\/trackway: .+DATABASE_URL/,
    );
    assert.doesNotMatch(res.stderr, /s3cret-pw/);
    assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(res.stdout, '');
  });
});
