#!/usr/bin/env node
// The production build: compiles src/ to dist/ with tsc (tsconfig.build.json) and copies the
// files tsc does not emit (the SQL migrations), so `node bin/trackway.js` runs plain JavaScript.
//
//   node scripts/build.mjs             build now (`npm run build`, and `npm install` via `prepare`)
//   node scripts/build.mjs --if-stale  build only when a file under src/ is newer than dist/
//                                      (before `npm start`, `npm run cli`, the tests, the benches)
//
// The new tree is written beside dist/ and swapped in whole, so a server already running from
// dist/ never loads a half-written module. Without TypeScript (an install with --omit=dev) an
// existing dist/ is kept as it is: that is how a production host runs a build made elsewhere.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');
const ifStale = process.argv.includes('--if-stale');

/** Every file the build reads: sources (tests excluded: they are not built) and its config. */
function inputs(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) inputs(path, out);
    else if (!name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function isStale() {
  if (!existsSync(stamp)) return true;
  const builtAt = statSync(stamp).mtimeMs;
  const files = [
    ...inputs(src),
    join(root, 'tsconfig.json'),
    join(root, 'tsconfig.build.json'),
    join(root, 'package-lock.json'),
  ];
  return files.some((file) => existsSync(file) && statSync(file).mtimeMs > builtAt);
}

if (ifStale && !isStale()) process.exit(0);

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  if (existsSync(stamp)) {
    process.stderr.write('build: TypeScript is not installed; keeping the existing dist/\n');
    process.exit(0);
  }
  process.stderr.write(
    'build: dist/ is missing and TypeScript is not installed. Run `npm install` (with dev\n' +
      'dependencies) and `npm run build`, or copy a dist/ built elsewhere.\n',
  );
  process.exit(1);
}

// A source saved while tsc runs must count as newer than this build.
const startedAt = new Date();
const next = `${dist}.next-${process.pid}`;
rmSync(next, { recursive: true, force: true });
process.stderr.write('build: compiling src/ to dist/ …\n');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', next], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (result.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write('build: tsc failed; dist/ left as it was\n');
  process.exit(result.status ?? 1);
}
for (const file of inputs(src)) {
  if (file.endsWith('.ts')) continue;
  cpSync(file, join(next, relative(src, file)));
}
writeFileSync(join(next, '.build-stamp'), `${startedAt.toISOString()}\n`);
utimesSync(join(next, '.build-stamp'), startedAt, startedAt);
const old = `${dist}.old-${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
