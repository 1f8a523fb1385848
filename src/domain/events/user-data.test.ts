import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashUserData, isSha256Hex, normaliseUserDataField, sha256Hex } from './user-data.ts';

// Vectors from Meta's Conversions API "Customer Information Parameters" examples; the hex is
// written out literally so a change in normalisation fails here.
const META = {
  email: '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f', // john_smith@gmail.com
  phone: 'e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176', // 16505551212
  john: '96d9632f363564cc3032521409cf22a852f2032eec099ed5967c0d000cec607a',
  smith: '6627835f988e2c5e50533d491163072d3f4f41f5c8b04630150debb3722ca2dd',
  valery: '08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c', // valéry
  newyork: '350c754ba4d38897693aa077ef43072a859d23f613443133fecbbd90a3512ca5',
  zip94035: '1794327a4d443904421f5ca1f3d72d0a62ba2f0770d80755ec2220fc0efb052e',
  us: '79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621',
};

describe('user_data hashing', () => {
  it("matches Meta's published examples", () => {
    assert.deepEqual(
      hashUserData({
        email: '  John_Smith@gmail.com ',
        phone: '+1 (650) 555-1212',
        first_name: 'John',
        last_name: 'Smith',
        city: 'New York',
        zip: '94035-1234',
        country: 'US',
      }),
      {
        email: META.email,
        phone: META.phone,
        first_name: META.john,
        last_name: META.smith,
        city: META.newyork,
        zip: META.zip94035,
        country: META.us,
      },
    );
    assert.equal(hashUserData({ first_name: 'Valéry' }).first_name, META.valery);
  });

  it('normalises each field by its own rule', () => {
    const n = normaliseUserDataField;
    assert.equal(n('phone', '+1.650.555.1212', {}), '16505551212');
    assert.equal(n('phone', '+44 20 7946 0958', {}), '442079460958');
    assert.equal(n('first_name', "  Mary-Jane  O'Neil ", {}), 'maryjane oneil');
    assert.equal(n('city', 'St. Louis', {}), 'stlouis');
    assert.equal(n('state', 'CA', {}), 'ca');
    assert.equal(n('zip', '941071234', {}), '94107');
    assert.equal(n('zip', '94107', { country: 'us' }), '94107');
    assert.equal(n('zip', 'SW1A 1AA', { country: 'GB' }), 'sw1a1aa');
    assert.equal(n('external_id', '  User-42 ', {}), 'User-42');
    assert.equal(n('country', ' gb ', {}), 'gb');
  });

  it('passes through values that already are SHA-256 hashes', () => {
    const hashed = sha256Hex('someone@example.com');
    assert.ok(isSha256Hex(hashed));
    assert.deepEqual(hashUserData({ email: hashed, phone: hashed, country: hashed }), {
      email: hashed,
      phone: hashed,
      country: hashed,
    });
    // Upper-case hex is not what a SHA-256 helper produces: treated as plain text.
    assert.notEqual(
      hashUserData({ external_id: hashed.toUpperCase() }).external_id,
      hashed.toUpperCase(),
    );
  });

  it('only touches the fields present', () => {
    assert.deepEqual(hashUserData({}), {});
    assert.deepEqual(Object.keys(hashUserData({ email: 'a@b.co' })), ['email']);
  });

  it('refuses values it cannot hash meaningfully', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ phone: '(650)555-1212' }, 'Invalid field: user_data.phone must be in E.164 format'],
      [{ phone: '+1 650' }, 'Invalid field: user_data.phone must be in E.164 format'],
      [{ phone: '+0 650 555 1212' }, 'Invalid field: user_data.phone must be in E.164 format'],
      [{ country: 'UK' }, 'Invalid field: user_data.country must be an ISO 3166-1 alpha-2 code'],
      [{ country: 'USA' }, 'Invalid field: user_data.country must be an ISO 3166-1 alpha-2 code'],
      [{ email: 'not-an-email' }, 'Invalid field: user_data.email must be an email address'],
      [{ first_name: ' !! ' }, 'Invalid field: user_data.first_name must not be empty'],
    ];
    for (const [input, message] of cases) {
      assert.throws(() => hashUserData(input), { message }, JSON.stringify(input));
    }
  });
});
