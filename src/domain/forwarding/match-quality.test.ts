import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { forwardable, UA } from '../../../test/platforms/forwardable.ts';
import { matchQuality } from './match-quality.ts';
import {
  type MetaMatchKey,
  metaKeysOf,
  metaKeysProblem,
  metaUserData,
} from './platforms/meta/user-data.ts';

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

describe('match quality computed once per combination of keys (issue 21)', () => {
  // The estimate as first written, from the keys present, for comparison.
  const WEIGHTS: Array<[string, MetaMatchKey, number]> = [
    ['email', 'em', 2.5],
    ['fbc', 'fbc', 1.5],
    ['phone', 'ph', 1.5],
    ['external_id', 'external_id', 1],
    ['fbp', 'fbp', 1],
    ['client_ip_address', 'client_ip_address', 0.75],
    ['client_user_agent', 'client_user_agent', 0.75],
    ['country', 'country', 0.5],
    ['first_name', 'fn', 0.1],
    ['last_name', 'ln', 0.1],
    ['city', 'ct', 0.1],
    ['state', 'st', 0.1],
    ['zip', 'zp', 0.1],
  ];
  const reference = (event: Parameters<typeof matchQuality>[0]) => {
    const present = metaKeysOf(metaUserData(event));
    const keys = WEIGHTS.filter((w) => present.has(w[1]));
    const total = metaKeysProblem(present) !== null ? 0 : keys.reduce((sum, w) => sum + w[2], 0);
    return {
      score: Math.round(total * 10) / 10,
      keys: keys.map((w) => w[0]),
      missing: WEIGHTS.filter((w) => !present.has(w[1])).map((w) => w[0]),
    };
  };

  it('gives what the estimate from scratch gives, for any keys present, twice', () => {
    const contact = fc.record(
      {
        email: fc.constant('a@example.com'),
        phone: fc.constant('+16505551212'),
        first_name: fc.constant('A'),
        last_name: fc.constant('B'),
        city: fc.constant('Paris'),
        state: fc.constant('IDF'),
        zip: fc.constant('75001'),
        country: fc.constant('FR'),
        external_id: fc.constant('u'),
      },
      { requiredKeys: [] },
    );
    const keys = fc.record(
      {
        clientIpAddress: fc.constant('203.0.113.7'),
        clientUserAgent: fc.constant(UA),
        fbc: fc.constant('fb.1.1554763741205.x'),
        fbp: fc.constant('fb.1.1558571054389.1'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(contact, fc.option(keys), (userData, matchKeys) => {
        const event = forwardable({ userData, matchKeys });
        assert.deepEqual(matchQuality(event), reference(event));
        assert.deepEqual(matchQuality(event), reference(event));
      }),
      { numRuns: 1_000 },
    );
  });

  it('shares a frozen answer, so no caller can change another event’s estimate', () => {
    const event = forwardable({ userData: { email: 'a@example.com' } });
    assert.ok(Object.isFrozen(matchQuality(event)));
    assert.ok(Object.isFrozen(matchQuality(event).keys));
  });

  it('counts an fbc made from the URL’s fbclid, and scores 0 when ad_user_data is denied', () => {
    const event = forwardable({ userData: { email: 'a@example.com' }, matchKeys: null });
    const plain = matchQuality(event);
    assert.ok(!plain.keys.includes('fbc'));
    const clicked = matchQuality({
      ...event,
      event: { url: 'https://shop.example/?fbclid=IwAR1abc', timestamp: new Date() },
    });
    assert.ok(clicked.keys.includes('fbc'));
    assert.equal(clicked.score, plain.score + 1.5);
    const denied = matchQuality({ ...event, consent: { ad_user_data: 'denied' } });
    assert.equal(denied.score, 0);
    assert.deepEqual(denied.keys, plain.keys, 'the keys present are still listed');
    assert.equal(matchQuality({ ...event, consent: { ad_user_data: 'granted' } }), plain);
  });
});
