import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Metadata, parsePhoneNumberFromString } from 'libphonenumber-js';
import { isPossibleE164, quickPossible } from './phone.ts';

const library = (e164: string) => parsePhoneNumberFromString(e164)?.isPossible() === true;

const CALLING_CODES = Object.keys(
  (new Metadata() as unknown as { countryCallingCodes(): object }).countryCallingCodes(),
);

/** A small seeded generator, so a failure names numbers that reproduce. */
function digits(seed: number) {
  let state = seed;
  return (length: number) => {
    let out = '';
    for (let i = 0; i < length; i++) {
      state = (state * 1103515245 + 12345) % 2147483648;
      out += String(state % 10);
    }
    return out;
  };
}

describe('isPossibleE164', () => {
  it('agrees with libphonenumber-js on every calling code, every length and every leading digit pair', () => {
    const next = digits(20261123);
    let checked = 0;
    let quick = 0;
    for (const code of CALLING_CODES) {
      for (let length = 0; code.length + length <= 15; length++) {
        for (let lead = 0; lead < 100; lead++) {
          const national = `${String(lead).padStart(2, '0')}${next(Math.max(0, length - 2))}`.slice(
            0,
            length,
          );
          const e164 = `+${code}${national}`;
          if (quickPossible(e164) !== undefined) quick++;
          assert.equal(isPossibleE164(e164), library(e164), e164);
          checked++;
        }
      }
    }
    // Not a vacuous pass: most numbers here are answered without the library.
    assert.ok(checked > 200_000, `only ${checked} numbers checked`);
    assert.ok(quick > checked / 2, `only ${quick} of ${checked} answered quickly`);
  });

  it('agrees with libphonenumber-js on any + and 2-15 digits (fast-check)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\+[1-9]\d{1,14}$/), (e164) => {
        assert.equal(isPossibleE164(e164), library(e164));
      }),
      { numRuns: 20_000 },
    );
  });

  it('answers everyday numbers quickly, and leaves the rest to the library', () => {
    for (const e164 of ['+16505550199', '+447911123456', '+4930123456', '+33612345678']) {
      assert.equal(quickPossible(e164), true, e164);
    }
    assert.equal(quickPossible('+1650555019'), false); // 9 digits: no NANP country allows it
    // A US number after a national prefix "1" is the library's to decide, as is a length only
    // some countries behind +1 allow (Canada's 7 digits), and a non-geographic code.
    assert.equal(quickPossible('+116505550199'), undefined);
    assert.equal(quickPossible('+15550199'), undefined);
    assert.equal(quickPossible('+80012345678'), undefined);
    assert.equal(isPossibleE164('+16505550199'), true);
    assert.equal(isPossibleE164('+1234'), false);
  });
});
