/**
 * The dependency rule in `npm run lint` (.dependency-cruiser.cjs) fails on what it forbids:
 * the same rules run over fixtures that break each of them once, and over src/, which must
 * pass.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const depcruise = (target: string) =>
  spawnSync(
    process.execPath,
    [
      'node_modules/dependency-cruiser/bin/dependency-cruise.mjs',
      target,
      '--config',
      '.dependency-cruiser.cjs',
    ],
    { cwd: root, encoding: 'utf8' },
  );

describe('the dependency rule (npm run lint)', () => {
  it('fails on a cycle, a domain import of http/, of a driver or of I/O, and the worker importing http/', () => {
    const run = depcruise('test/fixtures/dependency-rule/src');
    assert.notEqual(run.status, 0);
    const out = run.stdout + run.stderr;
    assert.match(out, /error no-cycles: .*delivery\/sender\.ts/);
    assert.match(out, /error domain-imports-no-layer: .*domain\/knows-http\.ts/);
    assert.match(out, /error domain-does-no-io: .*domain\/reads-files\.ts → fs/);
    assert.match(out, /error domain-does-no-io: .*domain\/queries\.ts → .*node_modules\/pg\//);
    assert.match(out, /error delivery-imports-no-http: .*delivery\/worker\.ts/);
  });

  it('passes on src/', () => {
    const run = depcruise('src');
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /no dependency violations found/);
  });
});
