/**
 * How far V8 lets the old generation grow past what the last full collection kept. By default
 * the limit is set to up to 4× the live heap when the collector is fast, which is what a
 * batch-heavy server gets: on PostgreSQL, batches of 1,000 events took the old space to 174 MB
 * for ~50 MB live and the process to 304–316 MB, above the 300 MB bound (issue 35). At 2× the
 * same bench peaked at 185–190 MB with the same events/s and CPU an event
 * (bench/results/ingest-2026-11-27b.md).
 *
 * Set at run time, before anything big is allocated: V8 reads this flag each time it computes
 * a new limit after a full collection. An operator's own `--heap-growing-percent` on node's
 * command line wins (NODE_OPTIONS refuses V8 flags, so that is the only place it can be).
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 100;

/** The flag to set, or null when the operator chose their own. */
export function heapGrowingFlag(execArgv: readonly string[]): string | null {
  const chosen = execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg));
  return chosen ? null : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Bounds the old generation's growth for this process (idempotent). */
export function boundHeapGrowth(): void {
  const flag = heapGrowingFlag(process.execArgv);
  if (flag) setFlagsFromString(flag);
}
