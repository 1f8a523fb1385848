import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { PURGE_EVERY_MS, PURGE_FIRST_AFTER_MS, purgeExpired, startPurgeJob } from './retention.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T12:00:00.000Z');

for (const kind of await testStores()) {
  describe(`retention purge [${kind.name}]`, () => {
    let h: Harness;
    const pixels = new Map<TestAccount, string>();

    before(async () => {
      h = await startHarness(kind);
      h.clock.set(new Date(NOW));
    });
    after(() => h.close());

    /** An account with one pixel and an event `daysAgo` days before NOW for each entry. */
    async function accountWith(plan: 'pro' | 'ultra' | 'enterprise', daysAgo: number[]) {
      const owner = await h.account(plan);
      const pixel = await h.pixel(owner);
      pixels.set(owner, pixel);
      for (const [i, days] of daysAgo.entries()) {
        const res = await h.track(owner, {
          pixel_id: pixel,
          event_name: 'Purchase',
          event_id: `e${days}-${i}`,
          value: 1,
          currency: 'USD',
          timestamp: new Date(NOW - days * DAY).toISOString(),
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      return owner;
    }
    const kept = async (owner: TestAccount) => {
      const res = await h.request(owner, {
        method: 'GET',
        url: `/v1/pixels/${pixels.get(owner)}/events?limit=100`,
      });
      const body = res.json();
      return {
        ids: body.events.map((e: { event_id: string }) => e.event_id).sort(),
        total: body.total,
      };
    };

    it("deletes what is past each plan's retention, batch by batch, and uncounts it", async () => {
      const pro = await accountWith('pro', [91, 90.01, 89, 1]);
      const ultra = await accountWith('ultra', [400, 366, 364]);
      const forever = await accountWith('enterprise', [3000]);
      const custom = await accountWith('enterprise', [31, 29]);
      await h.store.lifecycle.setRetentionDays(custom.account.id, 30);
      const pauses: number[] = [];
      const deleted = await purgeExpired(
        { store: h.store, clock: h.clock },
        {
          batch: 1,
          pause: async (tookMs) => {
            pauses.push(tookMs);
          },
        },
      );
      assert.equal(deleted, 5);
      // One row a transaction: a pause after every full batch, told how long the batch took
      // (the default waits twice that).
      assert.ok(pauses.length >= 5, `${pauses.length} pauses`);
      assert.ok(
        pauses.every((ms) => Number.isFinite(ms) && ms >= 0),
        `batch times ${pauses.join(', ')}`,
      );
      assert.deepEqual(await kept(pro), { ids: ['e1-3', 'e89-2'], total: 2 });
      assert.deepEqual(await kept(ultra), { ids: ['e364-2'], total: 1 });
      assert.deepEqual(await kept(forever), { ids: ['e3000-0'], total: 1 });
      assert.deepEqual(await kept(custom), { ids: ['e29-1'], total: 1 });
      const stats = await h.request(pro, {
        method: 'GET',
        url: `/v1/pixels/${pixels.get(pro)}/stats?interval=day&start_date=2026-01-01&end_date=2026-06-01`,
      });
      assert.deepEqual(
        stats.json().buckets.map((b: { count: number }) => b.count),
        [1, 1],
      );
      // Nothing more to do.
      assert.equal(await purgeExpired({ store: h.store, clock: h.clock }), 0);
    });

    it('runs within a minute of start, then hourly', async () => {
      const owner = await accountWith('pro', []);
      const runs: number[] = [];
      let ran: () => void = () => {};
      const stop = startPurgeJob(
        { store: h.store, clock: h.clock },
        {
          purged: (n) => {
            runs.push(n);
            ran();
          },
          failed: (error) => assert.fail(String(error)),
        },
      );
      const next = () => new Promise<void>((resolve) => (ran = resolve));
      try {
        assert.ok(PURGE_FIRST_AFTER_MS <= 60_000);
        let done = next();
        h.clock.advance(PURGE_FIRST_AFTER_MS);
        await done;
        assert.deepEqual(runs, [0]);
        // An event that crosses the pro retention before the next run is purged by it.
        const res = await h.track(owner, {
          pixel_id: pixels.get(owner),
          event_name: 'Lead',
          event_id: 'ageing',
          timestamp: new Date(
            h.clock.now().getTime() - 90 * DAY + PURGE_EVERY_MS / 2,
          ).toISOString(),
        });
        assert.equal(res.statusCode, 200);
        h.clock.advance(PURGE_EVERY_MS - 1);
        assert.deepEqual(runs, [0]);
        done = next();
        h.clock.advance(1);
        await done;
        assert.deepEqual(runs, [0, 1]);
      } finally {
        await stop();
      }
    });
  });
}
