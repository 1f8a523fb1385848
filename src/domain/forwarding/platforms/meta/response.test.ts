import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable } from '../../../../../test/platforms/forwardable.ts';
import { type MetaServer, startMetaServer } from '../../../../../test/platforms/meta-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import type { PlatformAnswer } from '../../platform-response.ts';
import { meta as metaModule } from './index.ts';
import { classifyMetaAnswer } from './response.ts';

const now = new Date();
const response = (status: number, body: unknown, retryAfter?: string): PlatformAnswer => ({
  kind: 'response',
  status,
  body: JSON.stringify(body),
  retryAfter,
});
const metaError = (error: Record<string, unknown>, status = 400) =>
  classifyMetaAnswer(response(status, { error: { fbtrace_id: 'Tr4ce', ...error } }), now);

describe("Meta's answers, classified", () => {
  let meta: MetaServer;
  before(async () => {
    meta = await startMetaServer();
  });
  after(() => meta.close());

  async function answerIn(mode: MetaServer['mode'], token = meta.accessToken) {
    meta.mode = mode;
    try {
      const built = metaModule.build(
        [forwardable()],
        { pixel_id: meta.pixelId, access_token: token },
        { now },
      );
      const answer = await send(meta.url, built.requests[0]!);
      return classifyMetaAnswer(
        { kind: 'response', status: answer.status, body: answer.body },
        now,
      );
    } finally {
      meta.mode = 'normal';
    }
  }

  it('reads the receipt of a success', async () => {
    const verdict = await answerIn('normal');
    assert.equal(verdict.kind, 'success');
    assert.equal(verdict.kind === 'success' && verdict.receipt['events_received'], 1);
    assert.match(String(verdict.kind === 'success' && verdict.receipt['fbtrace_id']), /^A/);
  });

  it('suspends on a refused or expired token, and on a pixel the token cannot reach', async () => {
    assert.equal((await answerIn('expired')).kind, 'auth');
    assert.equal((await answerIn('normal', 'EAAB-wrong')).kind, 'auth');
    assert.deepEqual(
      metaError({ code: 100, error_subcode: 33, message: 'Object does not exist' }),
      {
        kind: 'auth',
        message: 'Meta error 100/33: Object does not exist (fbtrace_id Tr4ce)',
      },
    );
    assert.equal(metaError({ code: 200, message: 'Permissions error' }, 403).kind, 'auth');
  });

  it('retries throttling, outages, is_transient errors and network failures', async () => {
    assert.equal((await answerIn('throttled')).kind, 'transient');
    assert.equal((await answerIn('down')).kind, 'transient');
    for (const code of [1, 2, 4, 17, 341, 368, 80003]) {
      assert.equal(metaError({ code, message: 'x' }).kind, 'transient', `code ${code}`);
    }
    assert.equal(metaError({ code: 99999, is_transient: true, message: 'x' }).kind, 'transient');
    assert.deepEqual(classifyMetaAnswer(response(429, {}, '30'), now), {
      kind: 'transient',
      message: 'HTTP 429: {}',
      retryAfterMs: 30_000,
    });
    assert.deepEqual(classifyMetaAnswer({ kind: 'network', message: 'ECONNREFUSED' }, now), {
      kind: 'transient',
      message: 'ECONNREFUSED',
    });
  });

  it("fails permanently with Meta's own words for an invalid event", async () => {
    meta.rejectEvent = () => 'The parameter custom_data.value must be a number.';
    try {
      const verdict = await answerIn('normal');
      assert.equal(verdict.kind, 'permanent');
      assert.match(
        verdict.kind === 'permanent' ? verdict.message : '',
        /^Meta error 100: Invalid parameter: The parameter custom_data.value must be a number. \(fbtrace_id A\w+\)$/,
      );
    } finally {
      delete meta.rejectEvent;
    }
    assert.deepEqual(
      metaError({
        code: 100,
        error_subcode: 2804003,
        error_user_title: 'Event Timestamp Too Old',
        error_user_msg: 'too old',
        message: 'Invalid parameter',
      }),
      {
        kind: 'permanent',
        message: 'Meta error 100/2804003: Event Timestamp Too Old: too old (fbtrace_id Tr4ce)',
      },
    );
    assert.equal(classifyMetaAnswer(response(400, 'not json'), now).kind, 'permanent');
  });
});
