/** Fixed windows aligned to the UTC calendar: the minute and the day. */
export type RateWindow = 'minute' | 'day';

export const RATE_WINDOW_SECONDS: Record<RateWindow, number> = { minute: 60, day: 86_400 };

export interface RateQuota {
  window: RateWindow;
  limit: number;
}

export interface RateWindowState {
  window: RateWindow;
  limit: number;
  /** Room left in the window after this request (0 when refused). */
  remaining: number;
  /** When the window resets, Unix epoch seconds. */
  resetAt: number;
}

export interface RateDecision {
  allowed: boolean;
  /** One entry per quota asked for, in the same order. */
  windows: RateWindowState[];
}

export interface RateLimiter {
  /**
   * Counts one request against every quota of `key` if all of them have room, atomically (also
   * across instances for a shared adapter). A refused request counts against none of them.
   * Windows are taken from `now`, so a test clock drives window boundaries.
   */
  consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision>;
  close(): Promise<void>;
}
