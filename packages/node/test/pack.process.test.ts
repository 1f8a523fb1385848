/**
 * The published artefact works: `npm pack` of the client, installed offline from the tarball
 * into a scratch project in a temp dir, imported by its package name and used against a
 * running server; its .d.ts files typecheck for a consumer with only the DOM's fetch types.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../../test/harness.ts';
import { startTestServer, type TestServer } from './server.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('npm pack of @trackway/node, installed in a scratch project', () => {
  let t: TestServer;
  const scratch = tempDir('trackway-scratch-');
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.stop();
    scratch.remove();
  });

  it('installs offline from the tarball and tracks an event against the server', async () => {
    // `prepack` builds dist/ with tsc first.
    execFileSync(npm, ['pack', '--pack-destination', scratch.path, '-w', '@trackway/node'], {
      cwd: root,
      stdio: 'pipe',
    });
    const tarball = readdirSync(scratch.path).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote a tarball');
    writeFileSync(
      join(scratch.path, 'package.json'),
      JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
    );
    execFileSync(
      npm,
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', `./${tarball}`],
      { cwd: scratch.path, stdio: 'pipe' },
    );
    writeFileSync(
      join(scratch.path, 'use.ts'),
      `import { Trackway, verifyWebhook, type TrackResult } from '@trackway/node';
const trackway = new Trackway({ apiKey: process.env.KEY!, baseUrl: process.env.BASE_URL! });
const pixel = await trackway.pixels.create({ name: 'Scratch', domain: 'scratch.example.com' });
const result: Promise<TrackResult> = trackway.track({ pixel_id: pixel.id, event_name: 'Purchase', value: 9.5, currency: 'EUR' });
await trackway.close();
const page = await trackway.events.list(pixel.id);
console.log(JSON.stringify({ result: await result, total: page.total, verify: typeof verifyWebhook }));
declare const process: { env: Record<string, string | undefined> };
`,
    );
    // A consumer's typecheck: ESM + NodeNext, the DOM's fetch types, no @types/node.
    writeFileSync(
      join(scratch.path, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          strict: true,
          outDir: 'out',
        },
        files: ['use.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc')], {
      cwd: scratch.path,
      encoding: 'utf8',
    });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
    const run = spawnSync(process.execPath, ['out/use.js'], {
      cwd: scratch.path,
      encoding: 'utf8',
      env: { ...process.env, KEY: t.apiKey, BASE_URL: t.server.url },
    });
    assert.equal(run.status, 0, run.stderr);
    const printed = JSON.parse(run.stdout);
    assert.equal(printed.result.ok, true);
    assert.match(printed.result.event_id, /^evt_/);
    assert.equal(printed.total, 1);
    assert.equal(printed.verify, 'function');
  });
});
