import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bareEvent } from '../../test/harness.ts';
import type { MatchQuality, TrackedEvent } from '../domain/model.ts';
import { matchColumns } from './match-columns.ts';

const event = (matchQuality: MatchQuality): TrackedEvent =>
  bareEvent({ accountId: 'acc_1', pixelId: 'px_1', eventId: 'e1', matchQuality });

describe('matchColumns: match_quality as stored', () => {
  it('writes the JSON of the estimate, the same when the shared frozen estimate comes again', () => {
    const quality = Object.freeze({
      score: 4.5,
      keys: Object.freeze(['email', 'phone']),
      missing: Object.freeze(['country']),
    }) as MatchQuality;
    const first = matchColumns(event(quality)).matchQuality;
    assert.equal(first, JSON.stringify(quality));
    assert.equal(matchColumns(event(quality)).matchQuality, first);
  });

  it('does not reuse the JSON of an estimate that can still change', () => {
    const quality = { score: 1, keys: ['email'], missing: [] } as unknown as MatchQuality;
    assert.equal(matchColumns(event(quality)).matchQuality, JSON.stringify(quality));
    (quality as { score: number }).score = 2;
    assert.equal(
      matchColumns(event(quality)).matchQuality,
      '{"score":2,"keys":["email"],"missing":[]}',
    );
  });
});
