/**
 * Database outage (issue 7): a TCP proxy stands between a real `trackway serve` and
 * PostgreSQL, and is cut for 10 s under load (every connection dropped, new ones refused).
 * Requests must fail fast with 503 `Service unavailable` instead of hanging, /readyz must say
 * so, and the service must recover by itself once the proxy is back, with every acknowledged
 * event stored.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './harness.ts';
import { runCli, startServerProcess } from './process.ts';
import { startProxy } from './tcp-proxy.ts';

describe('PostgreSQL outage under load (real process, TCP proxy)', () => {
  const schema = freshSchemaName();
  after(() => dropSchema(schema));

  it('answers 503 fast while the database is away, and recovers by itself', async () => {
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startProxy(target);
    const viaProxy = new URL(TEST_DATABASE_URL);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    viaProxy.searchParams.set('schema', schema);
    const env = { DATABASE_URL: viaProxy.toString() };
    const made = await runCli(
      ['accounts', 'create', '--name', 'Outage', '--plan', 'enterprise', '--json'],
      env,
    );
    assert.equal(made.code, 0, made.stderr);
    const key = JSON.parse(made.stdout).api_key as string;
    const server = await startServerProcess(env);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    try {
      const created = await fetch(`${server.url}/v1/pixels`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Shop', domain: 'shop.example.com' }),
      });
      const pixelId = ((await created.json()) as { id: string }).id;

      const acknowledged: string[] = [];
      const during: Array<{ status: number; ms: number; body: Record<string, unknown> }> = [];
      let phase: 'before' | 'outage' | 'after' = 'before';
      let running = true;
      let n = 0;
      const writers = Array.from({ length: 10 }, async () => {
        while (running) {
          const eventId = `o-${n++}`;
          const started = Date.now();
          const res = await fetch(`${server.url}/v1/track`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ pixel_id: pixelId, event_name: 'Lead', event_id: eventId }),
          }).catch((error) => {
            running = false;
            throw new Error(`the service went away: ${error}\n${server.errors()}`);
          });
          const body = (await res.json()) as Record<string, unknown>;
          if (res.status === 200) acknowledged.push(eventId);
          if (phase === 'outage')
            during.push({ status: res.status, ms: Date.now() - started, body });
          if (res.status !== 200) await sleep(50);
        }
      });

      await sleep(1_000);
      phase = 'outage';
      proxy.cut();
      await sleep(2_000);
      const notReady = await fetch(`${server.url}/readyz`).catch((error) => {
        throw new Error(`server gone: ${error}\n${server.errors()}`);
      });
      assert.equal(notReady.status, 503, '/readyz reports the outage');
      await sleep(8_000);
      proxy.restore();
      phase = 'after';

      // Recovery without a restart: requests succeed again within a few seconds.
      let recoveredAfter = -1;
      const restoredAt = Date.now();
      while (Date.now() - restoredAt < 15_000) {
        if ((await fetch(`${server.url}/readyz`)).status === 200) {
          recoveredAfter = Date.now() - restoredAt;
          break;
        }
        await sleep(200);
      }
      assert.ok(recoveredAfter >= 0, 'ready again within 15 s of the database coming back');
      const ackedBeforeEnd = acknowledged.length;
      await sleep(1_000);
      running = false;
      await Promise.all(writers);
      assert.ok(acknowledged.length > ackedBeforeEnd, 'tracking works again after the outage');

      const failures = during.filter((r) => r.status !== 200);
      assert.ok(failures.length > 0, 'the outage was seen');
      for (const failure of failures) {
        assert.equal(failure.status, 503, JSON.stringify(failure));
        assert.equal(failure.body['error'], 'Service unavailable');
        assert.equal(typeof failure.body['message'], 'string');
      }
      const slowest = Math.max(...failures.map((f) => f.ms));
      assert.ok(slowest < 5_000, `a 503 took ${slowest} ms`);

      // Nothing acknowledged is missing.
      const stored = new Set<string>();
      for (let offset = 0; ; offset += 100) {
        const res = await fetch(
          `${server.url}/v1/pixels/${pixelId}/events?limit=100&offset=${offset}`,
          { headers },
        );
        const page = (await res.json()) as { events: Array<{ event_id: string }> };
        for (const e of page.events) stored.add(e.event_id);
        if (page.events.length < 100) break;
      }
      const missing = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(missing, []);
      console.log(
        `db outage: ${failures.length} requests during the 10 s cut, all 503 (slowest ${slowest} ms); ` +
          `ready again ${recoveredAfter} ms after the database returned; ` +
          `${acknowledged.length} acknowledged, ${acknowledged.length} stored, 0 missing`,
      );
    } finally {
      await server.stop('SIGKILL');
      await proxy.close();
    }
  });
});
