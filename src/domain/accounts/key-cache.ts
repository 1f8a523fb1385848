import type { AccountStore } from '../ports/account-store.ts';
import type { Clock } from '../ports/clock.ts';
import { TtlCache } from '../ttl-cache.ts';

type KeyLookup = Pick<AccountStore, 'findByKeyHash'>;
type Found = Awaited<ReturnType<AccountStore['findByKeyHash']>>;

/** Longest a lookup is reused: revocations and plan or status changes apply within a second. */
export const KEY_CACHE_TTL_MS = 1_000;

/**
 * Key-hash → account lookups, reused for at most KEY_CACHE_TTL_MS (contract §7: a plan or
 * status change reaches every instance within 1 s). Unknown keys are remembered too, so a
 * stream of well-formed but wrong keys costs the same.
 */
export class ApiKeyCache implements KeyLookup {
  private readonly cache: TtlCache<Found>;

  constructor(
    private readonly store: KeyLookup,
    clock: Clock,
  ) {
    this.cache = new TtlCache(clock, KEY_CACHE_TTL_MS);
  }

  findByKeyHash(hash: string): Promise<Found> {
    return this.cache.get(hash, () => this.store.findByKeyHash(hash));
  }
}
