/**
 * Nothing acknowledged is lost: with the receiver down, the API process is SIGKILLed and
 * restarted; once the receiver is back, every message for every acknowledged event arrives.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from './harness.ts';
import { startServerProcess } from './process.ts';
import { startReceiver } from './receiver.ts';

describe('webhooks survive a receiver outage and a SIGKILL of the API process', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('delivers every message after restart', async () => {
    const env = {
      DATABASE_URL: `sqlite:${join(dir.path, 'crash.db')}`,
      TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
      TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
      // Compressed: one second between attempts, enough of them to outlast the outage.
      TRACKWAY_WEBHOOK_RETRY_SCHEDULE: Array(30).fill('1').join(','),
    };
    // Reserve a port for the receiver, then leave it closed: the receiver is "down".
    const probe = await startReceiver();
    const port = probe.port;
    await probe.close();

    let server = await startServerProcess(env);
    const key = /^ {2}(tw_live_\w+)$/m.exec(server.output())![1]!;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const webhook = await call('POST', '/v1/webhooks', {
      url: `http://127.0.0.1:${port}/hooks`,
      events: ['event.tracked'],
    });
    assert.equal(webhook.status, 201);
    const pixel = await call('POST', '/v1/pixels', { name: 'Shop', domain: 'shop.example.com' });
    const acknowledged: string[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await call('POST', '/v1/track', {
          pixel_id: pixel.body['id'],
          event_name: 'Purchase',
          event_id: `crash-${i}`,
          value: i,
        });
        if (res.status === 200) acknowledged.push(`crash-${i}`);
      }),
    );
    assert.equal(acknowledged.length, 40);

    assert.equal(await server.stop('SIGKILL'), null);
    const receiver = await startReceiver(port);
    try {
      server = await startServerProcess(env);
      await receiver.waitFor((received) => {
        const got = new Set(received.map((r) => (r.json.data as { event_id: string }).event_id));
        return acknowledged.every((id) => got.has(id));
      }, 45_000); // attempts in flight at the kill wait out their 20 s lease
      const got = receiver.received.map((r) => (r.json.data as { event_id: string }).event_id);
      assert.deepEqual([...new Set(got)].sort(), [...acknowledged].sort());
    } finally {
      await server.stop('SIGKILL');
      await receiver.close();
    }
  });
});
