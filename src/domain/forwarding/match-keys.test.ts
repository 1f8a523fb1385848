import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TrackwayError } from '../errors.ts';
import { sha256Hex } from '../events/user-data.ts';
import { isIpAddress, matchKeyHashes, splitMatchKeys, validateMatchKeys } from './match-keys.ts';

function rejection(input: unknown): { message: string; field: string | undefined } {
  try {
    validateMatchKeys(input);
  } catch (error) {
    assert.ok(error instanceof TrackwayError);
    return { message: error.message, field: error.field };
  }
  assert.fail('expected a rejection');
}

const FBC = 'fb.1.1554763741205.AbCdEfGhIjKlMnOpQrStUvWxYz1234567890';
const FBP = 'fb.1.1558571054389.1098115397';

describe('match keys', () => {
  it('accepts every documented key in its documented form', () => {
    const input = {
      action_source: 'physical_store',
      user_data: {
        client_ip_address: '2001:db8::8a2e:370:7334',
        client_user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
        fbc: FBC,
        fbp: FBP,
        ttclid: 'E.C.P.v3ksGbQ1',
        ttp: '2Aq0bnJ6hbS5wTHYQbEYAB',
        ga_client_id: '1197596843.1673515099',
      },
    };
    assert.deepEqual(validateMatchKeys(input), input);
  });

  it('refuses each malformed key, naming the field', () => {
    assert.deepEqual(rejection({ action_source: 'web' }), {
      message:
        'Invalid field: action_source must be one of: website, app, email, phone_call, chat, physical_store, system_generated, other',
      field: 'action_source',
    });
    assert.deepEqual(rejection({ user_data: { client_ip_address: '300.1.1.1' } }), {
      message: 'Invalid field: user_data.client_ip_address must be an IPv4 or IPv6 address',
      field: 'user_data.client_ip_address',
    });
    assert.equal(
      rejection({ user_data: { fbc: 'AbCdEf' } }).message,
      'Invalid field: user_data.fbc must be a Meta click id cookie: fb.<n>.<ms>.<fbclid>',
    );
    assert.equal(
      rejection({ user_data: { fbp: 'fb.1.x.1' } }).message,
      'Invalid field: user_data.fbp must be a Meta browser id cookie: fb.<n>.<ms>.<random>',
    );
    assert.equal(
      rejection({ user_data: { client_user_agent: 'x'.repeat(513) } }).message,
      'Invalid field: user_data.client_user_agent must be at most 512 characters',
    );
    assert.equal(
      rejection({ user_data: { ga_client_id: 'x'.repeat(257) } }).message,
      'Invalid field: user_data.ga_client_id must be at most 256 characters',
    );
    assert.equal(
      rejection({ user_data: { ip: '1.2.3.4' } }).message,
      'Unknown field: user_data.ip',
    );
  });

  it('tells IP addresses from look-alikes', () => {
    for (const ip of ['1.2.3.4', '255.255.255.255', '::1', '::', 'fe80::1', '::ffff:192.0.2.1']) {
      assert.equal(isIpAddress(ip), true, ip);
    }
    for (const bad of [
      '01.2.3.4',
      '1.2.3',
      '1.2.3.4.5',
      'localhost',
      '1::2::3',
      'fe80::1%eth0',
      '[::1]',
      '::1]/x[',
      '',
    ]) {
      assert.equal(isIpAddress(bad), false, bad);
    }
  });

  it('splits user_data into raw match keys and contact data, losing nothing', () => {
    const { actionSource, matchKeys, contact } = splitMatchKeys(
      { email: 'a@example.com', client_ip_address: '1.2.3.4', fbc: FBC, ga_client_id: '1.2' },
      undefined,
    );
    assert.equal(actionSource, 'website');
    assert.deepEqual(matchKeys, {
      clientIpAddress: '1.2.3.4',
      fbc: FBC,
      gaClientId: '1.2',
    });
    assert.deepEqual(contact, { email: 'a@example.com' });
    assert.equal(splitMatchKeys(undefined, 'app').actionSource, 'app');
  });

  it('shows the record only hashes of the match keys, computed on the value as sent', () => {
    const hashes = matchKeyHashes({
      clientIpAddress: '1.2.3.4',
      fbc: FBC,
    });
    assert.deepEqual(hashes, { client_ip_address: sha256Hex('1.2.3.4'), fbc: sha256Hex(FBC) });
    assert.ok(!JSON.stringify(hashes).includes('1.2.3.4'));
  });
});
