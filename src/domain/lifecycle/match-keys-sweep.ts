/**
 * Erasure of raw match keys (contract §11): they are kept at most 7 days after the event's
 * timestamp, then deleted. The insert stamps each row with its expiry; this sweep deletes the
 * rows past it, in short transactions (ingest, on SQLite the single writer, waits at most one).
 */
import type { Clock, Timers } from '../ports/clock.ts';
import type { Store } from '../ports/store.ts';
import { startPeriodic } from './periodic.ts';

/** Rows one sweep transaction deletes. */
export const SWEEP_BATCH = 1_000;
/** The first sweep runs this long after start… */
export const SWEEP_FIRST_AFTER_MS = 30_000;
/**
 * …and then this often: a raw key outlives its expiry by at most this (plus one sweep's run),
 * small beside the 7 days.
 */
export const SWEEP_EVERY_MS = 300_000;

/** Deletes every expired row of raw match keys, batch by batch; how many it deleted. */
export async function eraseExpiredMatchKeys(
  deps: { store: Store; clock: Clock },
  options: { batch?: number; pause?: () => Promise<void> } = {},
): Promise<number> {
  const batch = options.batch ?? SWEEP_BATCH;
  const pause = options.pause ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
  const now = deps.clock.now();
  let deleted = 0;
  for (;;) {
    const n = await deps.store.matchKeys.eraseExpired(now, batch);
    deleted += n;
    if (n < batch) return deleted;
    await pause();
  }
}

/**
 * Runs the sweep 30 s after start and then every 5 minutes, on the clock's timers (a test clock
 * fires them by moving time). One sweep at a time; a failed one is reported and the next runs
 * on schedule. Returns what stops it (waiting for a sweep under way to finish).
 */
export function startMatchKeysSweep(
  deps: { store: Store; clock: Clock & Timers },
  report: { erased(deleted: number): void; failed(error: unknown): void },
): () => Promise<void> {
  return startPeriodic(
    deps.clock,
    { firstAfterMs: SWEEP_FIRST_AFTER_MS, everyMs: SWEEP_EVERY_MS },
    () => eraseExpiredMatchKeys(deps),
    { done: report.erased, failed: report.failed },
  );
}
