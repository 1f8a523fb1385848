export interface Clock {
  now(): Date;
}

/**
 * Timers that run on a clock's time, so a test clock can fire them by moving time forward
 * instead of the test sleeping (the delivery worker's polls and waits).
 */
export interface Timers {
  /** Calls `callback` once `ms` of this clock's time have passed; returns what cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
}

export const systemClock: Clock & Timers = {
  now: () => new Date(),
  setTimer(callback, ms) {
    // Not unref'd: in a standalone `trackway worker` the worker's timer keeps the process alive.
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};
