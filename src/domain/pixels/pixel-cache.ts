import type { Pixel } from '../model.ts';
import type { Clock } from '../ports/clock.ts';
import type { PixelStore } from '../ports/pixel-store.ts';
import { TtlCache } from '../ttl-cache.ts';

/** Longest a pixel lookup is reused: a pause made on another instance applies within this. */
export const PIXEL_CACHE_TTL_MS = 1_000;

/** Where the cache hears that a pixel changed: the CommitSignal the store was opened with. */
export interface PixelChanges {
  onPixelChanged(listener: (accountId: string, pixelId: string) => void): void;
}

/**
 * A pixel lookup for the track path's trackability check, reused for at most
 * PIXEL_CACHE_TTL_MS: every tracked event checks its pixel, and a burst for one pixel should
 * cost one read per second, not one each. Only that check uses it (`Context.pixelForTracking`):
 * reading a pixel (GET, list, PATCH's answer) always goes to the store, so an instance never
 * shows a pixel older than another instance's last change.
 *
 * Only found pixels are remembered (a pixel created a moment ago must be trackable at once),
 * and a change this process's store commits forgets the entry at once: the store's runner
 * tells `changes` after the COMMIT (storage/sql/committed.ts).
 */
export function pixelForTracking(
  pixels: Pick<PixelStore, 'getPixel'>,
  clock: Clock,
  changes: PixelChanges | undefined,
): (accountId: string, pixelId: string) => Promise<Pixel | null> {
  const cache = new TtlCache<Pixel | null>(clock, PIXEL_CACHE_TTL_MS, {
    keep: (pixel) => pixel !== null,
  });
  const key = (accountId: string, pixelId: string) => `${accountId}/${pixelId}`;
  changes?.onPixelChanged((accountId, pixelId) => cache.delete(key(accountId, pixelId)));
  return (accountId, pixelId) =>
    cache.get(key(accountId, pixelId), () => pixels.getPixel(accountId, pixelId));
}
