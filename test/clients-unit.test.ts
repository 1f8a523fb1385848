/**
 * Each official client's own unit tests, in its language's standard runner (unittest,
 * go test, the PHP runner, minitest), run from `npm test`: a failure there fails here. They
 * include every vector of clients/webhook-vectors.json. A client not in the repository is
 * skipped; a missing toolchain is skipped on a developer's machine and fails under CI.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DRIVERS, run, unavailable } from './clients/drivers.ts';

describe('official clients: their own unit tests', () => {
  for (const driver of DRIVERS) {
    it(`${driver.name}: ${[driver.unitTests.cmd, ...driver.unitTests.args].join(' ')}`, async (t) => {
      const reason = unavailable(driver);
      if (reason) return t.skip(reason);
      const result = await run(driver.unitTests, { CI: process.env['CI'] ?? '' }, '', 300_000);
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    });
  }
});
