import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, testStores } from '../../../test/harness.ts';
import type { SqliteStore } from '../../storage/sqlite/store.ts';
import { PIXEL_CACHE_TTL_MS } from './pixel-cache.ts';

const [sqlite] = await testStores();

describe('pixel lookups reused for at most a second', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(sqlite!);
  });
  after(() => h.close());

  const lead = (pixel_id: string, event_id: string) => ({
    pixel_id,
    event_name: 'Lead',
    event_id,
  });

  it('sees a pause made elsewhere within the bound, and its own PATCH at once', async () => {
    const owner = await h.account();
    const pixel = await h.pixel(owner);
    assert.equal((await h.track(owner, lead(pixel, 'a'))).statusCode, 200);
    // Another instance pauses the pixel (its own store, which this process does not hear):
    // this one may go on for up to a second.
    (h.adapter as SqliteStore).db
      .prepare("UPDATE pixels SET status = 'paused' WHERE id = ?")
      .run(pixel);
    assert.equal((await h.track(owner, lead(pixel, 'b'))).statusCode, 200);
    h.clock.set(new Date(h.clock.now().getTime() + PIXEL_CACHE_TTL_MS));
    assert.equal((await h.track(owner, lead(pixel, 'c'))).statusCode, 409);

    // Resumed through this instance's API: applies to the very next request.
    const resumed = await h.request(owner, {
      method: 'PATCH',
      url: `/v1/pixels/${pixel}`,
      payload: { status: 'active' },
    });
    assert.equal(resumed.statusCode, 200);
    assert.equal((await h.track(owner, lead(pixel, 'd'))).statusCode, 200);
    const paused = await h.request(owner, {
      method: 'PATCH',
      url: `/v1/pixels/${pixel}`,
      payload: { status: 'paused' },
    });
    assert.equal(paused.statusCode, 200);
    assert.equal((await h.track(owner, lead(pixel, 'e'))).statusCode, 409);
  });

  it('never remembers a miss: a pixel made a moment ago is trackable at once', async () => {
    const owner = await h.account();
    assert.equal((await h.track(owner, lead('px_notyet', 'x'))).statusCode, 404);
    const pixel = await h.pixel(owner);
    assert.equal((await h.track(owner, lead(pixel, 'y'))).statusCode, 200);
    // Another account asking for the same id is still 404: entries are per account.
    const stranger = await h.account();
    assert.equal((await h.track(stranger, lead(pixel, 'z'))).statusCode, 404);
  });
});
