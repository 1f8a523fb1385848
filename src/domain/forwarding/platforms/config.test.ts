import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TrackwayError } from '../../errors.ts';
import { compileValidator } from '../../validation.ts';
import { Ga4ConfigSchema } from './ga4/config.ts';
import { MetaConfigSchema } from './meta/config.ts';
import { outsideWindowReason as reasonOf } from './platform.ts';
import { PLATFORM_MODULES } from './registry.ts';
import { TiktokConfigSchema } from './tiktok/config.ts';

const outsideWindowReason = (type: keyof typeof PLATFORM_MODULES, timestamp: Date, now: Date) =>
  reasonOf(PLATFORM_MODULES[type], { event: { timestamp } as never, actionSource: 'website' }, now);

const message = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof TrackwayError);
    return error.message;
  }
  assert.fail('expected a rejection');
};

describe('destination configs', () => {
  const meta = compileValidator(MetaConfigSchema);
  const ga4 = compileValidator(Ga4ConfigSchema);
  const tiktok = compileValidator(TiktokConfigSchema);

  it('accepts each platform’s documented config, overrides included', () => {
    meta({
      pixel_id: '1234567890',
      access_token: 'EAAB',
      test_event_code: 'TEST1',
      event_names: { Lead: 'QualifiedLead' },
    });
    ga4({ measurement_id: 'G-ABC123', api_secret: 's3cr3t' });
    tiktok({ pixel_code: 'C0ABCDEF', access_token: 'tt', test_event_code: 'TEST2' });
  });

  it('names the field at fault', () => {
    assert.equal(
      message(() => meta({ pixel_id: 'px_1', access_token: 'x' })),
      'Invalid field: pixel_id must be digits',
    );
    assert.equal(
      message(() => ga4({ measurement_id: 'UA-1', api_secret: 'x' })),
      'Invalid field: measurement_id must be G-…',
    );
    assert.equal(
      message(() => tiktok({ pixel_code: 'C0', access_token: 'x', secret: 1 })),
      'Unknown field: secret',
    );
    assert.equal(
      message(() => ga4({ measurement_id: 'G-1' })),
      'Missing required field: api_secret',
    );
  });
});

describe('platform windows', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const HOUR = 3_600_000;

  it('keeps an event exactly at the edge and skips one a millisecond older', () => {
    assert.equal(outsideWindowReason('meta', ago(7 * 24 * HOUR), now), null);
    assert.match(outsideWindowReason('meta', ago(7 * 24 * HOUR + 1), now)!, /7-day/);
    assert.equal(outsideWindowReason('ga4', ago(72 * HOUR), now), null);
    assert.match(outsideWindowReason('ga4', ago(72 * HOUR + 1), now)!, /72-hour/);
    assert.equal(outsideWindowReason('tiktok', ago(365 * 24 * HOUR), now), null);
  });
});
