import type { Pixel } from '../model.ts';
import type { Clock, PixelStore, Store } from '../ports.ts';
import { TtlCache } from '../ttl-cache.ts';

/** Longest a pixel lookup is reused: a pause made on another instance applies within this. */
export const PIXEL_CACHE_TTL_MS = 1_000;

/**
 * A pixel lookup for the track path's trackability check, reused for at most
 * PIXEL_CACHE_TTL_MS: every tracked event checks its pixel, and a burst for one pixel should
 * cost one read per second, not one each. Only that check uses it (`Context.pixelForTracking`):
 * reading a pixel (GET, list, PATCH's answer) always goes to the store, so an instance never
 * shows a pixel older than another instance's last change.
 *
 * Only found pixels are remembered (a pixel created a moment ago must be trackable at once),
 * and an update made through this instance's store forgets the entry immediately.
 */
export function withPixelCache(
  store: Store,
  clock: Clock,
): {
  store: Store;
  pixelForTracking: (accountId: string, pixelId: string) => Promise<Pixel | null>;
} {
  const cache = new TtlCache<Pixel | null>(clock, PIXEL_CACHE_TTL_MS, {
    keep: (pixel) => pixel !== null,
  });
  const key = (accountId: string, pixelId: string) => `${accountId}/${pixelId}`;
  const pixels: PixelStore = {
    createPixel: (pixel, quota, emit) => store.pixels.createPixel(pixel, quota, emit),
    getPixel: (accountId, pixelId) => store.pixels.getPixel(accountId, pixelId),
    listPixels: (accountId, page) => store.pixels.listPixels(accountId, page),
    async updatePixel(accountId, pixelId, change) {
      try {
        return await store.pixels.updatePixel(accountId, pixelId, change);
      } finally {
        cache.delete(key(accountId, pixelId));
      }
    },
    findByPublishableKey: (publishableKey, now) =>
      store.pixels.findByPublishableKey(publishableKey, now),
    isPixelSite: (hostname) => store.pixels.isPixelSite(hostname),
  };
  return {
    store: {
      accounts: store.accounts,
      pixels,
      events: store.events,
      webhooks: store.webhooks,
      keys: store.keys,
      stats: store.stats,
      feed: store.feed,
      sessions: store.sessions,
      lifecycle: store.lifecycle,
      matchKeys: store.matchKeys,
      destinations: store.destinations,
      forwarding: store.forwarding,
      migrate: () => store.migrate(),
      ping: () => store.ping(),
      close: () => store.close(),
    },
    pixelForTracking: (accountId, pixelId) =>
      cache.get(key(accountId, pixelId), () => store.pixels.getPixel(accountId, pixelId)),
  };
}
