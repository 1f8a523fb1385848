import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forwardable, UA } from '../../../test/platforms/forwardable.ts';
import { matchQuality } from './match-quality.ts';

describe('match quality (a local estimate, not Meta’s score)', () => {
  it('scores 10 with every key, and lists none missing', () => {
    const all = forwardable({
      userData: {
        email: 'a@example.com',
        phone: '+16505551212',
        first_name: 'A',
        last_name: 'B',
        city: 'Paris',
        state: 'IDF',
        zip: '75001',
        country: 'FR',
        external_id: 'u',
      },
      matchKeys: {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        fbc: 'fb.1.1554763741205.x',
        fbp: 'fb.1.1558571054389.1',
      },
    });
    assert.deepEqual(matchQuality(all), {
      score: 10,
      keys: [
        'email',
        'fbc',
        'phone',
        'external_id',
        'fbp',
        'client_ip_address',
        'client_user_agent',
        'country',
        'first_name',
        'last_name',
        'city',
        'state',
        'zip',
      ],
      missing: [],
    });
  });

  it("ranks keys by Meta's published priority: email and fbc first, names last", () => {
    const typical = forwardable({
      userData: { email: 'a@example.com' },
      matchKeys: {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        fbp: 'fb.1.1558571054389.1',
      },
    });
    assert.deepEqual(matchQuality(typical), {
      score: 5,
      keys: ['email', 'fbp', 'client_ip_address', 'client_user_agent'],
      missing: [
        'fbc',
        'phone',
        'external_id',
        'country',
        'first_name',
        'last_name',
        'city',
        'state',
        'zip',
      ],
    });
    const namesOnly = forwardable({ userData: { first_name: 'A', last_name: 'B' }, matchKeys: {} });
    const emailOnly = forwardable({ userData: { email: 'a@example.com' }, matchKeys: {} });
    assert.ok(matchQuality(emailOnly).score > matchQuality(namesOnly).score);
  });

  it('scores 0 the key sets Meta rejects outright, and an event with no keys', () => {
    const locationAndUa = forwardable({
      userData: { city: 'Paris', zip: '75001', country: 'FR' },
      matchKeys: { clientUserAgent: UA },
    });
    assert.equal(matchQuality(locationAndUa).score, 0);
    assert.deepEqual(matchQuality(locationAndUa).keys, [
      'client_user_agent',
      'country',
      'city',
      'zip',
    ]);
    assert.equal(matchQuality(forwardable({ userData: {}, matchKeys: {} })).score, 0);
  });
});
