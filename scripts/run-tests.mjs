#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's own test runner (TypeScript through tsx).
// Node 20's --test does not expand globs, so the file list is gathered here.
// Usage: npm test [-- <path filter> ...]   e.g. npm test -- track
//        npm run test:faults               the long fault-injection suites (*.faults.test.ts)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const faults = process.argv.includes('--faults');
const filters = process.argv.slice(2).filter((arg) => arg !== '--faults');
const suiteDirs = process.env.TRACKWAY_TEST_DIRS?.split(',') ?? [
  'src',
  'test',
  'packages/node/test',
];
const files = suiteDirs
  .flatMap((dir) => collect(dir, []))
  .filter((file) => file.endsWith('.faults.test.ts') === faults)
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// The process suites run bin/trackway.js, i.e. the compiled dist/: rebuild it first if any
// source changed, so they never test yesterday's build.
const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
  stdio: 'inherit',
});
if (build.status !== 0) process.exit(build.status ?? 1);
// Every log the suites produce is captured (in-process apps at trace level, server processes
// as they run) and searched afterwards for keys, secrets and PII: see test/log-capture.ts.
const logDir = mkdtempSync(join(tmpdir(), 'trackway-test-logs-'));
const env = {
  ...process.env,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  TRACKWAY_TEST_LOG_DIR: logDir,
};
// A file whose process never exits (a handle left open) fails after FILE_TIMEOUT_MS instead of
// holding the whole run: node's runner otherwise waits for it forever, and the run only ends at
// CI's limit (2026-11-27: a checkpoint thread left ref'd held it 7+ minutes, then for good).
// The bound counts each test and each file; the slowest file takes about a minute.
const FILE_TIMEOUT_MS = 600_000;
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    `--test-timeout=${FILE_TIMEOUT_MS}`,
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit', env },
);
const scan = spawnSync(process.execPath, ['--import', 'tsx', 'test/log-scan.ts', logDir], {
  stdio: 'inherit',
});
rmSync(logDir, { recursive: true, force: true });
process.exit(result.status || scan.status || (result.status === null ? 1 : 0));
