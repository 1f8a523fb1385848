import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESPONSE_EXCERPT_BYTES, responseExcerpt, storableText } from './response-excerpt.ts';

describe('response excerpts', () => {
  it('keeps ordinary text as it is', () => {
    assert.equal(responseExcerpt(Buffer.from('{"ok":true} ✓')), '{"ok":true} ✓');
  });

  it('turns NUL and invalid UTF-8 into U+FFFD (PostgreSQL refuses NUL in text)', () => {
    assert.equal(responseExcerpt(Buffer.from('ok\u0000')), 'ok\uFFFD');
    assert.equal(responseExcerpt(Buffer.from([0x6f, 0x6b, 0xff, 0xfe])), 'ok\uFFFD\uFFFD');
    assert.equal(storableText('a\u0000b\ud800'), 'a\uFFFDb\uFFFD');
  });

  it('keeps the first 1 KB, a character cut at the limit shown as U+FFFD', () => {
    const body = Buffer.concat([Buffer.alloc(RESPONSE_EXCERPT_BYTES - 1, 'a'), Buffer.from('é!')]);
    const excerpt = responseExcerpt(body);
    assert.equal(excerpt, `${'a'.repeat(RESPONSE_EXCERPT_BYTES - 1)}\uFFFD`);
  });
});
