/**
 * Whole-suite log capture (issue 7: keys, secrets and PII never appear in logs). When the test
 * runner sets TRACKWAY_TEST_LOG_DIR, every in-process app logs at trace level and every server
 * process's output is appended there; after the run, scripts/run-tests.mjs searches all of it
 * (test/log-scan.ts). Without the variable (a single file run by hand), logs stay silent.
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { createLogger } from '../src/logger.ts';

const dir = process.env.TRACKWAY_TEST_LOG_DIR;

/** Server processes log everything while captured, and only warnings otherwise. */
export const serverLogLevel = dir ? 'trace' : 'warn';

/** The logger for an app or worker built inside a test process. */
export function testLogger(): Logger {
  if (!dir) return createLogger('silent');
  const file = join(dir, `in-process-${process.pid}.log`);
  return createLogger('trace', pino.destination({ dest: file, append: true, sync: true }));
}

/** Appends everything a child process prints to the capture directory. */
export function captureOutput(child: ChildProcess): void {
  if (!dir) return;
  const sink = createWriteStream(join(dir, `process-${child.pid}.log`), { flags: 'a' });
  child.stdout?.on('data', (d) => sink.write(d));
  child.stderr?.on('data', (d) => sink.write(d));
  child.once('exit', () => sink.end());
}
