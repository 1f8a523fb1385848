import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COUNTRY_COUNT, isCountryCode, isCurrencyCode } from './codes.ts';

describe('ISO codes', () => {
  it('knows ISO 4217 currencies in any case', () => {
    for (const code of ['usd', 'EUR', 'Jpy', 'CHF']) assert.ok(isCurrencyCode(code), code);
    for (const code of ['XYZ', 'US', 'USDD', '', 'EURO'])
      assert.equal(isCurrencyCode(code), false, code);
  });

  it('knows exactly the 249 ISO 3166-1 alpha-2 countries', () => {
    assert.equal(COUNTRY_COUNT, 249);
    for (const code of ['US', 'gb', 'DE', 'fr', 'AX']) assert.ok(isCountryCode(code), code);
    for (const code of ['UK', 'XK', 'USA', 'EU', '', 'u'])
      assert.equal(isCountryCode(code), false, code);
  });
});
