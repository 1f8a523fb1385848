import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isIsoDate, isIsoDateTime, validCalendarDate } from './validation.ts';

/** The check before issue 21: a Date round trip (setUTCFullYear reads years 0–99 as such). */
function dateRoundTrip(y: string, m: string, d: string): boolean {
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(m) - 1, Number(d));
  return (
    date.getUTCFullYear() === Number(y) &&
    date.getUTCMonth() === Number(m) - 1 &&
    date.getUTCDate() === Number(d)
  );
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

describe('calendar dates by arithmetic (issue 21)', () => {
  it('agrees with the Date round trip on every month and day of the tricky years', () => {
    for (const year of [0, 4, 99, 100, 400, 1582, 1900, 1970, 2000, 2023, 2024, 2100, 9996, 9999]) {
      for (let month = 0; month <= 99; month++) {
        for (let day = 0; day <= 99; day++) {
          const args = [pad(year, 4), pad(month, 2), pad(day, 2)] as const;
          assert.equal(validCalendarDate(...args), dateRoundTrip(...args), args.join('-'));
        }
      }
    }
  });

  it('agrees with the Date round trip on any four-digit year', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        (year, month, day) => {
          const args = [pad(year, 4), pad(month, 2), pad(day, 2)] as const;
          assert.equal(validCalendarDate(...args), dateRoundTrip(...args));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('still refuses impossible dates in both formats', () => {
    assert.equal(isIsoDateTime('2023-02-29T00:00:00Z'), false);
    assert.equal(isIsoDateTime('2024-02-29T23:59:59.123+02:00'), true);
    assert.equal(isIsoDateTime('2024-04-31T00:00:00Z'), false);
    assert.equal(isIsoDate('1900-02-29'), false);
    assert.equal(isIsoDate('2000-02-29'), true);
  });
});
