import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  bareEvent,
  type Harness,
  startHarness,
  type TestAccount,
  testStores,
} from '../../../test/harness.ts';
import type { ClaimedReplay } from '../../domain/ports/forwarding-store.ts';
import { REPLAY_CHUNK } from '../../storage/queries/forwarding.ts';

// Replay (contract §21): recorded, then queued in the background in chunks of its own short
// transactions; refused for a disabled destination; never touching a job being sent; resumed
// after a crash from its last committed chunk.
for (const kind of await testStores()) {
  describe(`replay [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
    });
    after(() => h.close());

    const range = () => ({
      start_date: new Date(h.clock.now().getTime() - 86_400_000).toISOString(),
      end_date: new Date(h.clock.now().getTime() + 60_000).toISOString(),
    });

    /** `n` events of a new pixel, newest one second ago, stored straight into the store. */
    const storeEvents = async (pixel: string, n: number, prefix = 'e') => {
      const now = h.clock.now().getTime();
      for (let i = 0; i < n; i += 500) {
        const batch = [];
        for (let j = i; j < Math.min(n, i + 500); j++) {
          const at = new Date(now - 1_000 - j * 10);
          batch.push({
            event: bareEvent({
              accountId: acme.account.id,
              pixelId: pixel,
              eventId: `${prefix}-${j}`,
              timestamp: at,
              receivedAt: at,
            }),
            emit: [],
          });
        }
        await h.store.events.insertEvents(batch);
      }
    };

    const createDestination = async (pixel: string) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: '123456789012345', access_token: 'EAAtesttoken123' },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };

    const replay = (pixel: string, dst: string, body: Record<string, unknown> = {}) =>
      h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations/${dst}/replay`,
        payload: { ...range(), ...body },
      });

    const pendingOf = async (dst: string) =>
      (await h.store.forwarding.backlog()).find((b) => b.destinationId === dst)?.pending ?? 0;

    /** Advances `replay` as a worker would, chunk by chunk; the jobs each chunk queued. */
    const drain = async (held: ClaimedReplay, owner: string) => {
      const chunks: number[] = [];
      for (;;) {
        const step = await h.store.forwarding.advanceReplay({
          replay: held,
          owner,
          now: h.clock.now(),
          leaseMs: 30_000,
        });
        assert.ok(step, 'the lease is held');
        chunks.push(step.queued);
        if (step.done) return chunks;
      }
    };

    it('refuses a disabled destination with 409 and queues nothing', async () => {
      const pixel = await h.pixel(acme);
      await storeEvents(pixel, 5);
      const dst = await createDestination(pixel);
      const off = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${dst}`,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      const res = await replay(pixel, dst);
      assert.equal(res.statusCode, 409, res.body);
      assert.deepEqual(res.json(), {
        error: 'Conflict',
        message: `Destination is disabled: ${dst}. Enable it before replaying.`,
      });
      assert.equal(
        await h.store.forwarding.claimReplay({ owner: 'w', now: h.clock.now(), leaseMs: 1 }),
        null,
      );
    });

    it('answers how many at once and queues them in the background, in chunks', async () => {
      const n = 2 * REPLAY_CHUNK + REPLAY_CHUNK / 2;
      const pixel = await h.pixel(acme);
      // Stored before the destination existed: none has a job yet.
      await storeEvents(pixel, n);
      const dst = await createDestination(pixel);
      const res = await replay(pixel, dst);
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(res.json(), { queued: n });
      // Nothing queued by the request itself (it used to write all n in one transaction).
      assert.equal(await pendingOf(dst), 0);
      const held = await h.store.forwarding.claimReplay({
        owner: 'worker-1',
        now: h.clock.now(),
        leaseMs: 30_000,
      });
      assert.ok(held);
      const chunks = await drain(held, 'worker-1');
      console.log(`replay of ${n} events: chunks ${chunks.join(', ')}`);
      assert.deepEqual(chunks, [REPLAY_CHUNK, REPLAY_CHUNK, REPLAY_CHUNK / 2]);
      assert.equal(await pendingOf(dst), n);
      // Finished: nobody claims it again.
      assert.equal(
        await h.store.forwarding.claimReplay({ owner: 'w2', now: h.clock.now(), leaseMs: 1 }),
        null,
      );
    });

    it('resumes after its worker dies, from the last committed chunk: nothing lost or doubled', async () => {
      const n = 2 * REPLAY_CHUNK + 10;
      const pixel = await h.pixel(acme);
      await storeEvents(pixel, n);
      const dst = await createDestination(pixel);
      assert.deepEqual((await replay(pixel, dst)).json(), { queued: n });
      const now = h.clock.now();
      const first = await h.store.forwarding.claimReplay({ owner: 'dies', now, leaseMs: 5_000 });
      assert.ok(first);
      const step = await h.store.forwarding.advanceReplay({
        replay: first,
        owner: 'dies',
        now,
        leaseMs: 5_000,
      });
      assert.deepEqual(step, { queued: REPLAY_CHUNK, done: false });
      // The worker is gone: its lease holds the replay until it runs out.
      assert.equal(
        await h.store.forwarding.claimReplay({ owner: 'next', now, leaseMs: 5_000 }),
        null,
      );
      h.clock.advance(6_000);
      const resumed = await h.store.forwarding.claimReplay({
        owner: 'next',
        now: h.clock.now(),
        leaseMs: 30_000,
      });
      assert.deepEqual(resumed, first);
      // The dead worker's late chunk (had it only been slow) is refused: the lease is not its own.
      assert.equal(
        await h.store.forwarding.advanceReplay({
          replay: first,
          owner: 'dies',
          now: h.clock.now(),
          leaseMs: 5_000,
        }),
        null,
      );
      const rest = await drain(first, 'next');
      assert.equal(REPLAY_CHUNK + rest.reduce((a, b) => a + b, 0), n);
      assert.equal(await pendingOf(dst), n);
    });

    it('never touches a job that is being sent (leased)', async () => {
      const pixel = await h.pixel(acme);
      const dst = await createDestination(pixel);
      await storeEvents(pixel, 30);
      // A worker is sending 20 of the 30 pending jobs.
      const [batch] = await h.store.forwarding.claim({
        now: h.clock.now(),
        take: () => 20,
        busy: [],
        leaseMs: 60_000,
        owner: 'sender',
        only: dst,
      });
      assert.ok(batch);
      assert.equal(batch.jobs.length, 20);
      const res = await replay(pixel, dst, { statuses: ['pending', 'forwarded', 'failed'] });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(res.json(), { queued: 10 });
      const held = await h.store.forwarding.claimReplay({
        owner: 'replayer',
        now: h.clock.now(),
        leaseMs: 30_000,
      });
      assert.ok(held);
      assert.deepEqual(await drain(held, 'replayer'), [10]);
      // Another worker finds only the 10 that were not being sent.
      const [others] = await h.store.forwarding.claim({
        now: h.clock.now(),
        take: () => 100,
        busy: [],
        leaseMs: 60_000,
        owner: 'other',
        only: dst,
      });
      const sending = new Set(batch.jobs.map((j) => j.eventId));
      assert.equal(others?.jobs.length, 10);
      assert.ok(others.jobs.every((j) => !sending.has(j.eventId)));
      // The send in flight settles as its own: its lease was never taken away.
      const at = h.clock.now();
      await h.store.forwarding.settle({
        destination: batch.destination,
        owner: 'sender',
        outcomes: batch.jobs.map((j) => ({
          pixelId: j.pixelId,
          eventId: j.eventId,
          ...(j.ref !== undefined && { ref: j.ref }),
          status: 'forwarded',
          reason: null,
          lastError: null,
          forwardedAt: at,
          nextAttemptAt: null,
          attempts: [
            { attemptedAt: at, statusCode: 200, durationMs: 5, platformResponse: '{}', note: null },
          ],
        })),
        state: null,
        emit: [],
      });
      const forwarding = await h.store.forwarding.eventForwarding(
        acme.account.id,
        pixel,
        [...sending],
        false,
      );
      assert.equal([...forwarding.values()].filter((e) => e[0]?.status === 'forwarded').length, 20);
    });
  });
}
