import type { AccountStore, Clock } from '../ports.ts';

type KeyLookup = Pick<AccountStore, 'findByKeyHash'>;
type Found = Awaited<ReturnType<AccountStore['findByKeyHash']>>;

/** Longest a lookup is reused: revocations and plan or status changes apply within a second. */
export const KEY_CACHE_TTL_MS = 1_000;
const MAX_ENTRIES = 10_000;

/**
 * Remembers key-hash → account lookups for at most KEY_CACHE_TTL_MS, so a burst of requests
 * with one key costs one storage round trip per second per instance instead of one each. The
 * lifetime is short enough to be the consistency bound itself: every instance sees a revoked key
 * or a changed plan within a second, with no invalidation messages to lose. Unknown keys are
 * remembered too (a stream of well-formed but wrong keys costs the same), and concurrent misses
 * for one key share one lookup.
 */
export class ApiKeyCache implements KeyLookup {
  private readonly entries = new Map<string, { found: Promise<Found>; until: number }>();

  constructor(
    private readonly store: KeyLookup,
    private readonly clock: Clock,
  ) {}

  findByKeyHash(hash: string): Promise<Found> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(hash);
    // The lower bound guards against the clock stepping back and stretching an entry's life.
    if (hit && now < hit.until && now >= hit.until - KEY_CACHE_TTL_MS) return hit.found;
    const found = this.store.findByKeyHash(hash);
    this.entries.delete(hash);
    if (this.entries.size >= MAX_ENTRIES) {
      // Maps iterate in insertion order: drop the oldest entry.
      this.entries.delete(this.entries.keys().next().value!);
    }
    const entry = { found, until: now + KEY_CACHE_TTL_MS };
    this.entries.set(hash, entry);
    // A failed lookup (storage down) is not remembered.
    found.catch(() => {
      if (this.entries.get(hash) === entry) this.entries.delete(hash);
    });
    return found;
  }
}
