import type { Clock } from '../ports/clock.ts';
import type { KeyStore } from '../ports/key-store.ts';

/** A key's `last_used_at` is written at most this often per instance. */
export const KEY_USAGE_INTERVAL_MS = 60_000;

/**
 * Records that keys are used without a write per request: each instance writes a key's
 * `last_used_at` at most once a minute, in the background (a failed write is only logged, and
 * the next use a minute later tries again). So `last_used_at` is exact to within a minute.
 */
export class KeyUsage {
  private readonly written = new Map<string, number>();

  constructor(
    private readonly keys: Pick<KeyStore, 'touchKey'>,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  record(keyId: string): void {
    const now = this.clock.now();
    const last = this.written.get(keyId);
    if (last !== undefined && now.getTime() - last < KEY_USAGE_INTERVAL_MS) return;
    if (this.written.size > 100_000) this.prune(now.getTime());
    this.written.set(keyId, now.getTime());
    this.keys.touchKey(keyId, now).catch(this.onError);
  }

  /** Forgets keys not written for a minute: they would be written on their next use anyway. */
  private prune(now: number): void {
    for (const [keyId, at] of this.written) {
      if (now - at >= KEY_USAGE_INTERVAL_MS) this.written.delete(keyId);
    }
  }
}
