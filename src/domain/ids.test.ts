import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  encodeBase62,
  encodeBase62Number,
  newEventId,
  newId,
  newMessageId,
  randomBase62,
  uuidv7,
} from './ids.ts';

describe('ids', () => {
  it('makes prefixed base62 ids of 16 characters', () => {
    assert.match(newId('acct'), /^acct_[0-9A-Za-z]{16}$/);
    assert.match(newId('px'), /^px_[0-9A-Za-z]{16}$/);
    assert.notEqual(newId('px'), newId('px'));
  });

  it('draws base62 characters uniformly enough to use every one', () => {
    const seen = new Set(randomBase62(20_000));
    assert.equal(seen.size, 62);
  });

  it('encodes integers in base62 with padding', () => {
    assert.equal(encodeBase62(Uint8Array.from([0]), 3), '000');
    assert.equal(encodeBase62(Uint8Array.from([61]), 1), 'z');
    assert.equal(encodeBase62(Uint8Array.from([62]), 2), '10');
    assert.equal(encodeBase62(new Uint8Array(32).fill(255), 43).length, 43);
  });

  it('encodes a 32-bit number exactly as its four big-endian bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const bytes = Buffer.alloc(4);
        bytes.writeUInt32BE(n);
        assert.equal(encodeBase62Number(n, 6), encodeBase62(bytes, 6));
      }),
      { numRuns: 10_000, examples: [[0], [61], [62], [0xffffffff]] },
    );
  });

  it('makes RFC 9562 UUIDv7s that sort in creation order', () => {
    // 5,000 ids draw on many refills of the random pool (256 ids each): none repeats.
    const ids = Array.from({ length: 5_000 }, () => uuidv7());
    for (const id of ids)
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    const ms = Number.parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.now()) < 5_000);
  });

  it('prefixes event and message ids', () => {
    assert.match(newEventId(), /^evt_[0-9a-f-]{36}$/);
    assert.match(newMessageId(), /^msg_[0-9a-f-]{36}$/);
  });
});
