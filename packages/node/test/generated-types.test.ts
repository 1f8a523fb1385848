/**
 * src/generated/openapi.ts is what openapi-typescript makes of the checked-in openapi.json
 * (itself drift-checked against the server in src/http/openapi.test.ts), so the client's types
 * are the server's. After a schema change: `npm run openapi`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PLATFORM_MODULES, PLATFORMS } from '../../../src/domain/forwarding/platforms/registry.ts';
import { tempDir } from '../../../test/harness.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('generated client types', () => {
  it('match what openapi-typescript generates from openapi.json', () => {
    const dir = tempDir();
    try {
      const out = join(dir.path, 'openapi.ts');
      const run = spawnSync(
        process.execPath,
        [
          join(root, 'node_modules/openapi-typescript/bin/cli.js'),
          join(root, 'openapi.json'),
          '-o',
          out,
        ],
        { encoding: 'utf8' },
      );
      assert.equal(run.status, 0, run.stderr);
      assert.equal(
        readFileSync(join(root, 'packages/node/src/generated/openapi.ts'), 'utf8'),
        readFileSync(out, 'utf8'),
        'packages/node/src/generated/openapi.ts is stale: run `npm run openapi`',
      );
    } finally {
      dir.remove();
    }
  });

  it('type a destination’s config by its type, for every platform of the registry', () => {
    const types = readFileSync(join(root, 'packages/node/src/generated/openapi.ts'), 'utf8');
    for (const type of PLATFORMS) {
      const title = PLATFORM_MODULES[type].config.schema.title as string;
      // `{type: "<type>"; config: {…}}`, one branch of the union per platform.
      const branch = new RegExp(`type: "${type}";\\s*/\\*\\* ${title} \\*/\\s*config: \\{`);
      assert.match(types, branch, `${type}'s config is typed as ${title}`);
    }
  });
});
