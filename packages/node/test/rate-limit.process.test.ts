/**
 * 429s are waited out: an enterprise account limited to 2 requests a minute makes the client
 * meet a real 429, wait the `retry_after` the server names, and finish without an error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Trackway } from '../src/index.ts';
import { startTestServer, type TestServer } from './server.ts';

describe('@trackway/node waits out 429s (real server, 2 requests a minute)', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ requestsPerMinute: 2, dailyLimit: 1_000 });
  });
  after(() => t.stop());

  it('track() and typed methods retry after retry_after and succeed', async () => {
    const statuses: number[] = [];
    const client = new Trackway({
      apiKey: t.apiKey,
      baseUrl: t.server.url,
      maxBatchSize: 1,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        statuses.push(response.status);
        return response;
      },
    });
    // Four requests must meet the limit inside one window: start with room left in the
    // minute (this waits for a condition; it asserts nothing about time).
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await sleep(left + 50);
    const pixel = await client.pixels.create({ name: 'Limited', domain: 'shop.example.com' });
    const first = client.track({ pixel_id: pixel.id, event_name: 'Lead' });
    const second = client.track({ pixel_id: pixel.id, event_name: 'Lead' });
    const results = await client.close();
    assert.deepEqual(await Promise.all([first, second]), results);
    assert.ok(
      results.every((r) => r.ok),
      JSON.stringify(results),
    );
    assert.ok(statuses.includes(429), `a 429 was met: ${statuses}`);
    // The method calls wait too (a GET now lands in the window that admitted the retry).
    assert.equal((await client.pixels.get(pixel.id)).id, pixel.id);
    assert.equal(statuses.at(-1), 200);
  });
});
