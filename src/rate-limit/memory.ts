/**
 * The in-process limiter: the default without Redis, and the fallback while Redis is down.
 * One Map entry per (key, window); an entry from an older window counts as empty, and stale
 * entries are swept once per minute so the Map holds only live windows.
 */
import type {
  RateDecision,
  RateLimiter,
  RateQuota,
  RateWindow,
} from '../domain/ports/rate-limiter.ts';
import { windowIndex, windowResetAt } from './windows.ts';

interface Counter {
  window: RateWindow;
  index: number;
  count: number;
}

export class MemoryRateLimiter implements RateLimiter {
  readonly #counters = new Map<string, Counter>();
  #sweptMinute = Number.NEGATIVE_INFINITY;

  async consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision> {
    const counters = this.#countersOf(key, quotas, now);
    let allowed = true;
    quotas.forEach((quota, i) => {
      if (counters[i]!.count >= quota.limit) allowed = false;
    });
    // Check every window before touching any: a refused request consumes nothing.
    if (allowed) for (const counter of counters) counter.count++;
    return {
      allowed,
      windows: quotas.map((quota, i) => {
        const counter = counters[i]!;
        return {
          window: quota.window,
          limit: quota.limit,
          remaining: Math.max(0, quota.limit - counter.count),
          resetAt: windowResetAt(quota.window, counter.index),
        };
      }),
    };
  }

  /**
   * `n` calls of `consume` for the same key, limits and moment, counted at once: admits the
   * first `min(n, room)` of them, as one after another would, and returns how many, with each
   * window's count as found before them (the primary's shared limits, cluster/shared-limits.ts,
   * answer a loop turn's calls of one account this way).
   */
  consumeMany(
    key: string,
    quotas: readonly RateQuota[],
    now: Date,
    n: number,
  ): { admitted: number; countsBefore: number[] } {
    const counters = this.#countersOf(key, quotas, now);
    const countsBefore = counters.map((counter) => counter.count);
    let admitted = n;
    quotas.forEach((quota, i) => {
      admitted = Math.min(admitted, quota.limit - countsBefore[i]!);
    });
    admitted = Math.max(0, admitted);
    for (const counter of counters) counter.count += admitted;
    return { admitted, countsBefore };
  }

  /** The live counter of each quota's window (a new one when its window has turned). */
  #countersOf(key: string, quotas: readonly RateQuota[], now: Date): Counter[] {
    const nowMs = now.getTime();
    const minute = windowIndex('minute', nowMs);
    if (minute !== this.#sweptMinute) this.#sweep(nowMs, minute);
    return quotas.map((quota) => {
      const id = `${key}\u0000${quota.window}`;
      const index = windowIndex(quota.window, nowMs);
      let counter = this.#counters.get(id);
      if (counter === undefined || counter.index !== index) {
        counter = { window: quota.window, index, count: 0 };
        this.#counters.set(id, counter);
      }
      return counter;
    });
  }

  /** Entries whose window has ended can never be read again. */
  #sweep(nowMs: number, minute: number): void {
    this.#sweptMinute = minute;
    for (const [id, counter] of this.#counters) {
      if (counter.index < windowIndex(counter.window, nowMs)) this.#counters.delete(id);
    }
  }

  /** How many windows are held; lets the contract suite see that old windows are dropped. */
  get size(): number {
    return this.#counters.size;
  }

  async close(): Promise<void> {
    this.#counters.clear();
  }
}
