import type { Timers } from '../ports/clock.ts';

/**
 * Runs `job` once `firstAfterMs` after start and then every `everyMs`, on the clock's timers (a
 * test clock fires them by moving time). One run at a time; a failed run is reported and the
 * next runs on schedule. Returns what stops it (waiting for a run under way to finish).
 */
export function startPeriodic<T>(
  clock: Timers,
  timing: { firstAfterMs: number; everyMs: number },
  job: () => Promise<T>,
  report: { done(result: T): void; failed(error: unknown): void },
): () => Promise<void> {
  let cancel: (() => void) | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const schedule = (ms: number) => {
    cancel = clock.setTimer(() => {
      running = job()
        .then(report.done, report.failed)
        .finally(() => {
          if (!stopped) schedule(timing.everyMs);
        });
    }, ms);
  };
  schedule(timing.firstAfterMs);
  return async () => {
    stopped = true;
    cancel?.();
    await running;
  };
}
