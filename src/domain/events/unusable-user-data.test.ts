import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prepareEvent } from './track-event.ts';
import { dropUnusableUserData } from './unusable-user-data.ts';

const at = new Date('2026-11-24T18:42:10Z');
const body = (user_data: unknown) => ({ pixel_id: 'px_1', event_name: 'Purchase', user_data });

describe('dropUnusableUserData (contract §19)', () => {
  it('hands back the very body when every value can be used', () => {
    const input = body({ email: 'a@b.co', phone: '+1 650 555 0199', country: 'us' });
    const screened = dropUnusableUserData(input);
    assert.equal(screened.body, input);
    assert.deepEqual(screened.dropped, []);
  });

  it('takes out each value that fails its format check, with the reason', () => {
    const input = body({
      email: 'jane.example.com',
      phone: '650 555 0199',
      country: 'UK',
      state: '!!',
      zip: ' - ',
      first_name: 'Jane',
      fbc: 'IwAR2xYz',
      external_id: 'x'.repeat(257),
    });
    const screened = dropUnusableUserData(input);
    assert.deepEqual(screened.dropped, [
      { field: 'user_data.email', reason: 'must be an email address' },
      { field: 'user_data.phone', reason: 'must be in E.164 format' },
      { field: 'user_data.country', reason: 'must be an ISO 3166-1 alpha-2 code' },
      { field: 'user_data.state', reason: 'must not be empty' },
      { field: 'user_data.zip', reason: 'must not be empty' },
      { field: 'user_data.fbc', reason: 'must be a Meta click id cookie: fb.<n>.<ms>.<fbclid>' },
      { field: 'user_data.external_id', reason: 'must be at most 256 characters' },
    ]);
    assert.deepEqual((screened.body as { user_data: unknown }).user_data, { first_name: 'Jane' });
    // The caller's body is not changed.
    assert.equal((input.user_data as { phone: string }).phone, '650 555 0199');
  });

  it('leaves wrong types, unknown keys and a caller-hashed value to the validator', () => {
    const hashed = 'a'.repeat(64);
    const input = body({ phone: 6505551212, emial: 'x', country: hashed });
    assert.deepEqual(dropUnusableUserData(input).dropped, []);
    assert.deepEqual(dropUnusableUserData(body('me@example.com')).dropped, []);
    assert.deepEqual(dropUnusableUserData(body(['+1'])).dropped, []);
    assert.deepEqual(dropUnusableUserData('text').dropped, []);
  });

  it('gives prepareEvent a record without the value, its path in dropped and a warning', () => {
    const event = prepareEvent('acc_1', body({ email: 'a@b.co', phone: '650 555 0199' }), at);
    assert.deepEqual(Object.keys(event.userData ?? {}), ['email']);
    assert.deepEqual(event.dropped, ['user_data.phone']);
    assert.deepEqual(event.warnings, ['user_data.phone dropped: must be in E.164 format']);
    assert.equal(event.ingested?.hashes?.meta?.ph, undefined);
    assert.equal(event.ingested?.hashes?.ga4?.sha256_phone_number, undefined);
    assert.equal(event.ingested?.hashes?.tiktok?.phone, undefined);
    const clean = prepareEvent('acc_1', body({ email: 'a@b.co' }), at);
    assert.equal(clean.dropped, undefined);
  });
});
