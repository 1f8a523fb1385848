import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TestClock } from '../../test/harness.ts';
import { type Look, WorkLoop } from './work-loop.ts';

const POLL_MS = 1_000;

/** One call of the loop's look, answered by the test. */
interface Call {
  now: Date;
  answer(look: Look): void;
  fail(error: unknown): void;
}

/** The test clock, counting the timers set and those still armed (neither fired nor cancelled). */
class CountingClock extends TestClock {
  timersSet = 0;
  armed = 0;
  override setTimer(callback: () => void, ms: number): () => void {
    this.timersSet += 1;
    this.armed += 1;
    let live = true;
    const disarm = () => {
      if (live) this.armed -= 1;
      live = false;
    };
    const cancel = super.setTimer(() => {
      disarm();
      callback();
    }, ms);
    return () => {
      disarm();
      cancel();
    };
  }
}

/** The loop under test, its clock, and the looks it makes, answered one by one. */
function harness(wakeGapMs = 0) {
  const clock = new CountingClock();
  const calls: Call[] = [];
  const waiting: Array<(call: Call) => void> = [];
  const failures: unknown[] = [];
  let made = 0;
  const loop = new WorkLoop({
    clock,
    pollMs: POLL_MS,
    look: (now) =>
      new Promise<Look>((resolve, reject) => {
        made += 1;
        const call = { now, answer: resolve, fail: reject };
        const waiter = waiting.shift();
        if (waiter) waiter(call);
        else calls.push(call);
      }),
    failed: (error) => failures.push(error),
    wakeGapMs,
  });
  return {
    clock,
    loop,
    failures,
    /** How many looks the loop has made so far. */
    made: () => made,
    /** Asserts the loop's next look comes exactly `ms` of clock time from now, not sooner. */
    looksAfter(ms: number) {
      const before = made;
      clock.advance(ms - 1);
      assert.equal(made, before, `looked before ${ms} ms`);
      clock.advance(1);
      assert.equal(made, before + 1, `no look at ${ms} ms`);
    },
    /** The next look (made already, or when it is made). */
    look: () =>
      new Promise<Call>((resolve) => {
        const call = calls.shift();
        if (call) resolve(call);
        else waiting.push(resolve);
      }),
  };
}

/**
 * Lets the loop act on an answer: its continuation runs in microtasks, and a look it
 * schedules at once runs in the test clock's immediate, both before this resolves.
 */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const nothing: Look = { claimed: 0, next: null };

describe('work loop (the delivery workers’ wake / poll / stop loop)', () => {
  it('looks at once when started, and a burst of wake-ups before it runs makes one look', async () => {
    const h = harness();
    h.loop.start();
    for (let i = 0; i < 5; i++) h.loop.wake();
    // Every stored event wakes the loop: a burst sets one timer, not one each.
    assert.equal(h.clock.timersSet, 1);
    const first = await h.look();
    assert.deepEqual(first.now, h.clock.now());
    first.answer(nothing);
    await settle();
    assert.equal(h.made(), 1);
    await h.loop.stop();
  });

  it('with nothing due, looks again after the poll interval and not before', async () => {
    const h = harness();
    h.loop.start();
    (await h.look()).answer(nothing);
    await settle();
    h.looksAfter(POLL_MS);
    await h.loop.stop();
  });

  it('looks again when the next item comes due, if that is sooner than the poll', async () => {
    const h = harness();
    h.loop.start();
    const call = await h.look();
    call.answer({ claimed: 0, next: new Date(call.now.getTime() + 200) });
    await settle();
    h.looksAfter(200);
    await h.loop.stop();
  });

  it('an item already due but not claimed (leased, or over a cap) waits for the poll', async () => {
    const h = harness();
    h.loop.start();
    // Due exactly now, then due for a while.
    for (const ago of [0, 5_000]) {
      const call = await h.look();
      call.answer({ claimed: 0, next: new Date(call.now.getTime() - ago) });
      await settle();
      h.looksAfter(POLL_MS);
    }
    await h.loop.stop();
  });

  it('after claiming work, looks again at once (more may be waiting)', async () => {
    const h = harness();
    h.loop.start();
    (await h.look()).answer({ claimed: 3, next: null });
    (await h.look()).answer(nothing);
    await settle();
    assert.equal(h.made(), 2);
    await h.loop.stop();
  });

  it('woken during a look (a commit meanwhile), looks again as soon as it ends', async () => {
    const h = harness();
    h.loop.start();
    const first = await h.look();
    h.loop.wake();
    h.loop.wake();
    first.answer(nothing);
    (await h.look()).answer(nothing);
    await settle();
    assert.equal(h.made(), 2);
    await h.loop.stop();
  });

  it('a wake-up while sleeping looks at once and replaces the pending poll', async () => {
    const h = harness();
    h.loop.start();
    (await h.look()).answer(nothing);
    await settle();
    h.clock.advance(400);
    h.loop.wake();
    (await h.look()).answer(nothing);
    await settle();
    // The poll armed by the first look is gone: the next falls a full interval after the second.
    h.looksAfter(POLL_MS);
    await h.loop.stop();
  });

  it('with a wake gap (Citus), a wake-up looks no sooner than the gap after the last look began', async () => {
    const GAP = 100;
    const h = harness(GAP);
    h.loop.start();
    // The first look is at once: none came before it.
    (await h.look()).answer(nothing);
    await settle();
    h.clock.advance(30);
    // A burst of commits 30 ms later: one look, 70 ms on (100 after the first began).
    for (let i = 0; i < 5; i++) h.loop.wake();
    h.looksAfter(GAP - 30);
    const second = await h.look();
    // Woken during that look: the next waits for the gap too, counted from its start.
    h.loop.wake();
    h.clock.advance(40);
    second.answer(nothing);
    await settle();
    h.looksAfter(GAP - 40);
    // Work claimed: the next look is at once, gap or not (more may be waiting).
    (await h.look()).answer({ claimed: 2, next: null });
    (await h.look()).answer(nothing);
    await settle();
    assert.equal(h.made(), 4);
    // Long after the last look, a wake-up looks at once.
    h.clock.advance(GAP * 3);
    h.loop.wake();
    (await h.look()).answer(nothing);
    await settle();
    assert.equal(h.made(), 5);
    await h.loop.stop();
  });

  it('a look that fails is reported and tried again after the poll interval', async () => {
    const h = harness();
    h.loop.start();
    const refused = new Error('database away');
    (await h.look()).fail(refused);
    await settle();
    assert.deepEqual(h.failures, [refused]);
    h.looksAfter(POLL_MS);
    (await h.look()).answer(nothing);
    await settle();
    assert.equal(h.made(), 2);
    await h.loop.stop();
  });

  it('stop waits for the work in flight, and no look follows it', async () => {
    const h = harness();
    h.loop.start();
    let finish = () => {};
    let fail = (_: Error) => {};
    h.loop.track(new Promise<void>((resolve) => (finish = resolve)));
    h.loop.track(new Promise<void>((_, reject) => (fail = reject)));
    // A task that rejects before anyone waits on it is not left an unhandled rejection (which
    // would end the process): the workers report their tasks' failures themselves.
    h.loop.track(Promise.reject(new Error('reported by the worker')));
    (await h.look()).answer(nothing);
    await settle();
    let stopped = false;
    const stopping = h.loop.stop().then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(stopped, false);
    finish();
    await settle();
    assert.equal(stopped, false);
    fail(new Error('not recorded'));
    await stopping;
    // No timer is left armed: in production it would keep a stopped process alive.
    assert.equal(h.clock.armed, 0);
    h.loop.wake();
    h.clock.advance(10 * POLL_MS);
    await settle();
    assert.equal(h.made(), 1);
  });

  it('stopped during a look, schedules nothing after it', async () => {
    const h = harness();
    h.loop.start();
    const call = await h.look();
    const timers = h.clock.timersSet;
    const stopping = h.loop.stop();
    call.answer({ claimed: 5, next: null });
    await stopping;
    await settle();
    assert.equal(h.clock.timersSet, timers);
    assert.equal(h.clock.armed, 0);
    h.clock.advance(10 * POLL_MS);
    await settle();
    assert.equal(h.made(), 1);
  });
});
