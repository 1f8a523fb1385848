import {
  authenticateKeyHash,
  INVALID_API_KEY,
  MISSING_API_KEY,
} from '../domain/accounts/accounts.ts';
import { hashApiKey, hasValidChecksum } from '../domain/accounts/api-key.ts';
import { KEY_CACHE_TTL_MS } from '../domain/accounts/key-cache.ts';
import { TrackwayError } from '../domain/errors.ts';
import type { Account, KeyScope } from '../domain/model.ts';
import type { AccountStore } from '../domain/ports/account-store.ts';
import type { Clock } from '../domain/ports/clock.ts';

const BEARER = /^Bearer +(\S+) *$/i;

/** How many distinct headers one second may remember; past it, keys are hashed every time. */
const MAX_REMEMBERED = 1_000;

/**
 * The SHA-256 of each recently presented `Authorization` header whose key passed its checksum.
 * A client sends the same key on every request, so the checksum and the hash are computed once
 * per key and second instead of once per request (issue 21).
 *
 * This holds raw keys, so it holds them briefly: every entry is dropped when the second that
 * began with the first of them is over (KEY_CACHE_TTL_MS, the bound the key cache already puts
 * on a revocation), on the next request or by a timer when no request comes. Only keys with a
 * valid checksum are remembered, at most MAX_REMEMBERED, so a flood of guesses cannot grow it.
 * What a header resolves to is unchanged: the hash goes through the key cache as before.
 */
export class KeyHashes {
  readonly #hashes = new Map<string, string>();
  #since = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly clock: Clock) {}

  /** The key's SHA-256, or null when the header holds no well-formed key. */
  of(header: string | undefined): string | null {
    if (header === undefined) return null;
    const now = this.clock.now().getTime();
    // The second check guards against the clock stepping back and stretching the entries' life.
    if (this.#hashes.size > 0 && (now - this.#since >= KEY_CACHE_TTL_MS || now < this.#since)) {
      this.clear();
    }
    const known = this.#hashes.get(header);
    if (known !== undefined) return known;
    const token = BEARER.exec(header)?.[1];
    if (token === undefined || !hasValidChecksum(token)) return null;
    const hash = hashApiKey(token);
    if (this.#hashes.size === 0) {
      this.#since = now;
      this.#timer = setTimeout(() => this.clear(), KEY_CACHE_TTL_MS).unref();
    }
    if (this.#hashes.size < MAX_REMEMBERED) this.#hashes.set(header, hash);
    return hash;
  }

  /** How many headers are remembered (for tests). */
  get size(): number {
    return this.#hashes.size;
  }

  clear(): void {
    this.#hashes.clear();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** `Authorization: Bearer <key>` → the key's account, id and scope; anything else is a 401 (spec §Authentication). */
export function authenticateRequest(
  keys: Pick<AccountStore, 'findByKeyHash'>,
  hashes: KeyHashes,
  header: string | undefined,
): Promise<{ account: Account; keyId: string; scope: KeyScope }> {
  if (header === undefined || header.trim() === '') {
    return Promise.reject(new TrackwayError('unauthorized', MISSING_API_KEY));
  }
  const hash = hashes.of(header);
  if (hash === null) return Promise.reject(new TrackwayError('unauthorized', INVALID_API_KEY));
  return authenticateKeyHash(keys, hash);
}
