import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forwardable } from '../../../test/platforms/forwardable.ts';
import { maskIdentifiers, rawIdentifiers } from './mask-identifiers.ts';
import { maskSecret } from './model.ts';

describe('masking raw identifiers in a test send', () => {
  it('masks a raw value wherever it is, whole or inside a longer string; leaves the rest', () => {
    const raw = ['E.C.P.click-4455', 'us'];
    const masked = maskIdentifiers(
      {
        user: { ttclid: 'E.C.P.click-4455', country: 'us', note: 'plus' },
        page: { url: 'https://shop.example/?ttclid=E.C.P.click-4455' },
        list: ['us', 7, null, true],
      },
      raw,
    );
    assert.deepEqual(masked, {
      user: { ttclid: '****4455', country: '****', note: 'plus' },
      page: { url: 'https://shop.example/?ttclid=****4455' },
      list: ['****', 7, null, true],
    });
  });

  it('masks a payload string that is a long part of a raw value (Reddit’s uuid of the _rdt_uuid cookie), not a short one', () => {
    const uuid = '70d79c3a-f35a-4733-92d1-b6c196544886';
    const masked = maskIdentifiers(
      { user: { uuid, short: '70d79c3a', other: 'd1683b1c-0000-4000-8000-000000000000' } },
      [`1754915740517.${uuid}`],
    );
    assert.deepEqual(masked, {
      user: { uuid: '****4886', short: '70d79c3a', other: 'd1683b1c-0000-4000-8000-000000000000' },
    });
  });

  it("collects the event's match keys and unhashed location, longest first", () => {
    const event = forwardable({
      userData: { city: 'Paris', country: 'FR' },
      matchKeys: { clientIpAddress: '203.0.113.7', ttclid: 'click-id-1' },
    });
    const raw = rawIdentifiers(event);
    assert.ok(raw.includes('203.0.113.7') && raw.includes('click-id-1'));
    assert.ok(raw.includes('paris') && raw.includes('fr'), JSON.stringify(raw));
    assert.deepEqual(
      raw,
      [...raw].sort((a, b) => b.length - a.length),
    );
  });
});

describe('maskSecret', () => {
  it('shows the last 4 only of a secret long enough to keep most of it hidden', () => {
    assert.equal(maskSecret('EAABsecret9876'), '****9876');
    assert.equal(maskSecret('12345678'), '****5678');
    // Four characters or fewer would be shown whole; up to 7, all but a few: masked whole.
    for (const short of ['', 'a', 'abcd', 'abcde', 'abcdefg'])
      assert.equal(maskSecret(short), '****');
  });
});
