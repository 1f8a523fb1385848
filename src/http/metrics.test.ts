import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, testStores } from '../../test/harness.ts';

const [sqlite] = await testStores();

describe('GET /metrics', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(sqlite!);
  });
  after(() => h.close());

  it('serves Prometheus text without a key, with route templates and no ids or PII', async () => {
    const owner = await h.account();
    const pixel = await h.pixel(owner);
    const event = {
      pixel_id: pixel,
      event_name: 'Lead',
      event_id: 'm-1',
      user_data: { email: 'metrics.person@example.com' },
    };
    assert.equal((await h.track(owner, event)).statusCode, 200);
    assert.equal((await h.track(owner, event)).statusCode, 200);
    await h.request(null, { method: 'GET', url: `/v1/pixels/${pixel}` });
    // The batch route counts too: one new event, one already stored.
    const batch = await h.request(owner, {
      method: 'POST',
      url: '/v1/track/batch',
      payload: { events: [event, { ...event, event_id: 'm-2' }] },
    });
    assert.equal(batch.json().accepted, 1);

    const res = await h.request(null, { method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/plain/);
    const text = res.body;
    assert.match(text, /trackway_events_tracked_total\{result="stored"\} 2\n/);
    assert.match(text, /trackway_events_tracked_total\{result="deduplicated"\} 2\n/);
    assert.match(
      text,
      /trackway_http_request_duration_seconds_count\{method="POST",route="\/v1\/track",status="200"\} 2\n/,
    );
    assert.match(text, /route="\/v1\/pixels\/:pixel_id",status="401"/);
    assert.match(text, /trackway_process_resident_memory_bytes/);
    assert.ok(!text.includes(pixel), 'no pixel ids in labels');
    assert.ok(!text.includes(owner.account.id), 'no account ids');
    assert.ok(!text.includes('metrics.person'), 'no PII');
  });
});
