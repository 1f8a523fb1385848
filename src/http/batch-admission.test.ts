import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it, mock } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { admitBatch, BATCHES_BUSY, BatchAdmission } from './batch-admission.ts';

/** One batch request as the admission sees it: what happened to it, and how to end it. */
function ask(admission: BatchAdmission, account: string, log: string[], name: string) {
  const state = { admitted: false, refused: false };
  const leave = admission.enter(
    account,
    () => {
      state.admitted = true;
      log.push(name);
    },
    () => {
      state.refused = true;
    },
  );
  return { state, leave };
}

describe('batch admission', () => {
  it("admits account B's batch at once while account A has 20 waiting", () => {
    const admission = new BatchAdmission({ perAccount: 2, total: 8 });
    const log: string[] = [];
    const a = Array.from({ length: 22 }, (_, i) => ask(admission, 'A', log, `a${i}`));
    assert.deepEqual(log, ['a0', 'a1']);
    assert.deepEqual(admission.counts, { active: 2, waiting: 20 });
    const b = ask(admission, 'B', log, 'b0');
    assert.equal(b.state.admitted, true);
    assert.deepEqual(admission.counts, { active: 3, waiting: 20 });
    for (const x of a) x.leave();
    b.leave();
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });

  it("serves one account's waiting batches first in, first out", () => {
    const admission = new BatchAdmission({ perAccount: 2 });
    const log: string[] = [];
    const a = Array.from({ length: 6 }, (_, i) => ask(admission, 'A', log, `a${i}`));
    a[1]?.leave();
    a[0]?.leave();
    a[3]?.leave();
    assert.deepEqual(log, ['a0', 'a1', 'a2', 'a3', 'a4']);
    assert.equal(a[5]?.state.admitted, false);
    for (const x of a) x.leave();
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });

  it('hands the slots the total frees round-robin over the accounts that wait', () => {
    // The total binds here (4 over all accounts): A and B fill it; A queues 5 more, then C 2.
    const admission = new BatchAdmission({ perAccount: 2, total: 4 });
    const log: string[] = [];
    const a = Array.from({ length: 7 }, (_, i) => ask(admission, 'A', log, `a${i}`));
    const b = [ask(admission, 'B', log, 'b0'), ask(admission, 'B', log, 'b1')];
    const c = [ask(admission, 'C', log, 'c0'), ask(admission, 'C', log, 'c1')];
    assert.deepEqual(log, ['a0', 'a1', 'b0', 'b1']);
    // Each freed slot goes to the next account in turn, not to A's longer queue.
    a[0]?.leave();
    a[2]?.leave();
    b[0]?.leave();
    b[1]?.leave();
    assert.deepEqual(log.slice(4), ['a2', 'c0', 'a3', 'c1']);
    for (const x of [...a, ...c]) x.leave();
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });

  it("refuses past an account's queue bound, and only that account", () => {
    const admission = new BatchAdmission({ perAccount: 1, waitingPerAccount: 2 });
    const log: string[] = [];
    const a = Array.from({ length: 4 }, (_, i) => ask(admission, 'A', log, `a${i}`));
    assert.deepEqual(
      a.map((x) => x.state),
      [
        { admitted: true, refused: false },
        { admitted: false, refused: false },
        { admitted: false, refused: false },
        { admitted: false, refused: true },
      ],
    );
    const b = ask(admission, 'B', log, 'b0');
    assert.equal(b.state.admitted, true);
    for (const x of [...a, b]) x.leave();
  });

  it('refuses past the queue bound over all accounts', () => {
    const admission = new BatchAdmission({ perAccount: 1, total: 2, waitingTotal: 2 });
    const log: string[] = [];
    const asked = ['A', 'B', 'A', 'C'].map((account, i) => ask(admission, account, log, `${i}`));
    assert.equal(ask(admission, 'D', log, 'd0').state.refused, true);
    assert.deepEqual(admission.counts, { active: 2, waiting: 2 });
    for (const x of asked) x.leave();
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });

  it('refuses a batch that waited too long, and frees its place', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const admission = new BatchAdmission({ perAccount: 1, maxWaitMs: 20_000 });
      const log: string[] = [];
      const first = ask(admission, 'A', log, 'a0');
      const second = ask(admission, 'A', log, 'a1');
      mock.timers.tick(19_999);
      assert.equal(second.state.refused, false);
      mock.timers.tick(1);
      assert.equal(second.state.refused, true);
      assert.deepEqual(admission.counts, { active: 1, waiting: 0 });
      first.leave();
      assert.equal(second.state.admitted, false);
      assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
    } finally {
      mock.timers.reset();
    }
  });

  it('lets a waiting batch whose client left go without taking a slot', () => {
    const admission = new BatchAdmission({ perAccount: 1 });
    const log: string[] = [];
    const first = ask(admission, 'A', log, 'a0');
    const gone = ask(admission, 'A', log, 'a1');
    const third = ask(admission, 'A', log, 'a2');
    gone.leave();
    first.leave();
    assert.deepEqual(log, ['a0', 'a2']);
    third.leave();
    third.leave();
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });
});

describe('the batch route hook', () => {
  /** A request and its reply as the hook uses them: the account, the raw response's close. */
  function fake(account: string) {
    const raw = Object.assign(new EventEmitter(), { destroyed: false });
    const sent: { status?: number; headers: Record<string, unknown>; body?: unknown } = {
      headers: {},
    };
    const reply = {
      raw,
      code(status: number) {
        sent.status = status;
        return reply;
      },
      header(name: string, value: unknown) {
        sent.headers[name] = value;
        return reply;
      },
      send(body: unknown) {
        sent.body = body;
        return reply;
      },
    };
    const request = { account: { id: account }, raw: { socket: { destroyed: false } } };
    return {
      request: request as unknown as FastifyRequest,
      reply: reply as unknown as FastifyReply,
      raw,
      sent,
    };
  }

  it('frees the slot when the response closes, sent or aborted', () => {
    const admission = new BatchAdmission({ perAccount: 1 });
    const hook = admitBatch(admission) as (
      request: FastifyRequest,
      reply: FastifyReply,
      done: () => void,
    ) => void;
    const passed: string[] = [];
    const first = fake('A');
    const second = fake('A');
    hook(first.request, first.reply, () => passed.push('first'));
    hook(second.request, second.reply, () => passed.push('second'));
    assert.deepEqual(passed, ['first']);
    first.raw.emit('close');
    assert.deepEqual(passed, ['first', 'second']);
    // The client of the second goes mid-body: its close frees the slot just the same.
    second.raw.emit('close');
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });

  it("answers the spec's 503 body with Retry-After: 1 past the bound", () => {
    const admission = new BatchAdmission({ perAccount: 1, waitingPerAccount: 0 });
    const hook = admitBatch(admission) as (
      request: FastifyRequest,
      reply: FastifyReply,
      done: () => void,
    ) => void;
    const first = fake('A');
    const refused = fake('A');
    let passed = 0;
    hook(first.request, first.reply, () => passed++);
    hook(refused.request, refused.reply, () => passed++);
    assert.equal(passed, 1);
    assert.deepEqual(refused.sent, {
      status: 503,
      headers: { 'retry-after': 1 },
      body: { error: 'Service unavailable', message: BATCHES_BUSY },
    });
    refused.raw.emit('close');
    assert.deepEqual(admission.counts, { active: 1, waiting: 0 });
    first.raw.emit('close');
    assert.deepEqual(admission.counts, { active: 0, waiting: 0 });
  });
});
