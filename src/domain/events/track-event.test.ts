import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prepareEvent } from './track-event.ts';

const at = new Date('2026-11-25T10:00:00.000Z');
const body = (extra: Record<string, unknown> = {}) => ({
  pixel_id: 'px_1',
  event_name: 'Purchase',
  ...extra,
});

describe('prepareEvent: custom_data serialised once', () => {
  it('keeps the string its size was checked on, the JSON of custom_data as sent', () => {
    const custom = { z: 1, a: { 'é"': ['x', null, 2.5] }, coupon: 'WELCOME10' };
    const event = prepareEvent('acc_1', body({ custom_data: custom }), at);
    assert.equal(event.customDataJson, JSON.stringify(custom));
    assert.equal(event.customDataJson, JSON.stringify(event.customData));
  });

  it('has none without custom_data', () => {
    assert.equal(prepareEvent('acc_1', body(), at).customDataJson, null);
  });
});
