import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { prepareEvent } from '../domain/events/track-event.ts';
import { storedHashes } from '../domain/forwarding/platform-user-data.ts';
import { decodePlatformHashes, encodePlatformHashes } from './platform-hashes.ts';

const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
// Field names are the platforms' and user_data's own, never input (so never `__proto__`,
// which a plain object takes as its prototype: fast-check found it, seed 1151759150).
const field = fc.stringMatching(/^[a-z_]{1,24}$/).filter((name) => name !== '__proto__');
const dictionary = <T>(values: fc.Arbitrary<T>, keys = field) =>
  fc.dictionary(keys, values, { noNullPrototype: true });

describe('platform hashes as the event row keeps them', () => {
  it('reads back exactly what was written, whatever the record holds', () => {
    fc.assert(
      fc.property(
        dictionary(dictionary(hex), fc.constantFrom('ga4', 'tiktok', 'pinterest')),
        dictionary(hex),
        (hashes, record) => {
          const text = encodePlatformHashes(hashes, record);
          assert.deepEqual(decodePlatformHashes(JSON.parse(text), record), hashes);
        },
      ),
    );
  });

  it('stores each hash once, and none the record already holds', () => {
    const event = prepareEvent(
      'acc_1',
      {
        pixel_id: 'px_1',
        event_name: 'Purchase',
        user_data: { email: 'jane.doe@example.com', phone: '+16505550199', first_name: 'Jane' },
      },
      new Date(),
    );
    const hashes = storedHashes(event.ingested!.hashes!);
    const text = encodePlatformHashes(hashes, event.userData);
    const full = JSON.stringify(hashes);
    const distinct = new Set(Object.values(hashes).flatMap((own) => Object.values(own ?? {})));
    const recorded = new Set(Object.values(event.userData ?? {}));
    const extra = [...distinct].filter((h) => !recorded.has(h));
    for (const hash of distinct) {
      const times = text.split(hash).length - 1;
      assert.equal(times, recorded.has(hash) ? 0 : 1, 'each hash at most once, in `~`');
    }
    assert.deepEqual(JSON.parse(text)['~'], extra);
    assert.ok(text.length * 2 < full.length, `${text.length} bytes against ${full.length}`);
    assert.deepEqual(decodePlatformHashes(JSON.parse(text), event.userData), hashes);
  });

  it('reads rows written before in the full form as they are', () => {
    const old = { ga4: { sha256_email_address: 'a'.repeat(64) } };
    assert.deepEqual(decodePlatformHashes(old, null), old);
  });

  it('leaves out a field whose user_data value is gone rather than sending it empty', () => {
    const record = { email: 'b'.repeat(64) };
    const text = encodePlatformHashes({ tiktok: { email: 'b'.repeat(64) } }, record);
    assert.deepEqual(decodePlatformHashes(JSON.parse(text), {}), { tiktok: {} });
  });
});
