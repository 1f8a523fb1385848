/**
 * The in-process limiter: the default without Redis, and the fallback while Redis is down.
 * One Map entry per (key, window); an entry from an older window counts as empty, and stale
 * entries are swept once per minute so the Map holds only live windows.
 */
import type { RateDecision, RateLimiter, RateQuota, RateWindow } from '../domain/ports.ts';
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
    const nowMs = now.getTime();
    const minute = windowIndex('minute', nowMs);
    if (minute !== this.#sweptMinute) this.#sweep(nowMs, minute);

    const counters: Counter[] = [];
    let allowed = true;
    for (const quota of quotas) {
      const id = `${key}\u0000${quota.window}`;
      const index = windowIndex(quota.window, nowMs);
      let counter = this.#counters.get(id);
      if (counter === undefined || counter.index !== index) {
        counter = { window: quota.window, index, count: 0 };
        this.#counters.set(id, counter);
      }
      if (counter.count >= quota.limit) allowed = false;
      counters.push(counter);
    }
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
