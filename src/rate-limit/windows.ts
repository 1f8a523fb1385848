/** Window arithmetic shared by every adapter, so they cannot disagree on where a window starts. */
import { RATE_WINDOW_SECONDS, type RateWindow } from '../domain/ports/rate-limiter.ts';

/** Index of the window holding `nowMs`, counted from the Unix epoch (UTC-aligned by definition). */
export function windowIndex(window: RateWindow, nowMs: number): number {
  return Math.floor(nowMs / (RATE_WINDOW_SECONDS[window] * 1000));
}

/** Unix epoch seconds at which window `index` ends. */
export function windowResetAt(window: RateWindow, index: number): number {
  return (index + 1) * RATE_WINDOW_SECONDS[window];
}
