import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedMemo } from './bounded-memo.ts';

describe('BoundedMemo', () => {
  it('computes an input once, null answers included', () => {
    let calls = 0;
    const memo = new BoundedMemo((input) => {
      calls++;
      return input === 'none' ? null : input.toUpperCase();
    });
    assert.equal(memo.get('shop.example'), 'SHOP.EXAMPLE');
    assert.equal(memo.get('shop.example'), 'SHOP.EXAMPLE');
    assert.equal(memo.get('none'), null);
    assert.equal(memo.get('none'), null);
    assert.equal(calls, 2);
  });

  it('holds at most maxEntries inputs, and none longer than maxKeyChars', () => {
    let calls = 0;
    const memo = new BoundedMemo(
      (input) => {
        calls++;
        return input.length;
      },
      { maxEntries: 10, maxKeyChars: 20 },
    );
    for (let i = 0; i < 1_000; i++) assert.equal(memo.get(`origin-${i}`), `origin-${i}`.length);
    assert.ok(memo.size <= 10);
    const long = 'x'.repeat(21);
    memo.get(long);
    memo.get(long);
    assert.equal(calls, 1_002, 'a long input is computed every time, never kept');
  });
});
