import type { Clock } from './ports/clock.ts';

/**
 * Remembers lookups for at most `ttlMs`, so a burst of requests for one thing costs one storage
 * round trip per interval per instance instead of one each. The lifetime is the consistency
 * bound itself: every instance sees a change within `ttlMs`, with no invalidation messages to
 * lose (a change made through this instance can also `delete` at once). Concurrent misses for
 * one key share one lookup; a failed lookup (storage down) is not remembered.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; until: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly options: { maxEntries?: number; keep?: (value: V) => boolean } = {},
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(key);
    // The lower bound guards against the clock stepping back and stretching an entry's life.
    if (hit && now < hit.until && now >= hit.until - this.ttlMs) return hit.value;
    const value = load();
    this.entries.delete(key);
    if (this.entries.size >= (this.options.maxEntries ?? 10_000)) {
      // Maps iterate in insertion order: drop the oldest entry.
      this.entries.delete(this.entries.keys().next().value!);
    }
    const entry = { value, until: now + this.ttlMs };
    this.entries.set(key, entry);
    const forget = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    const keep = this.options.keep;
    value.then((v) => {
      if (keep && !keep(v)) forget();
    }, forget);
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
