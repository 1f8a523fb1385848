import type { Account, Pixel } from './model.ts';
import type { Clock } from './ports/clock.ts';
import type { Store } from './ports/store.ts';

/** What every domain verb is handed: the adapters it may use and who is asking. */
export interface Context {
  store: Store;
  clock: Clock;
  /** The authenticated account; every read and write is scoped to it. */
  account: Account;
  /**
   * How the track path checks that a pixel exists and is active: a lookup reused for up to a
   * second (pixels/pixel-cache.ts). Only that check may use it; reads of the pixel itself go to
   * the store, so they are never stale (issue 15 item 1). The store's lookup when left out.
   */
  pixelForTracking?: (accountId: string, pixelId: string) => Promise<Pixel | null>;
  /**
   * Told the `user_data` values (`user_data.phone` …) left out of an event that was stored or
   * deduplicated (contract §19), for the metric that counts them by field.
   */
  droppedValues?: (fields: readonly string[]) => void;
}

/** The lookup the track path checks pixels with (see `Context.pixelForTracking`). */
export function trackingLookup(
  ctx: Context,
): (accountId: string, pixelId: string) => Promise<Pixel | null> {
  return (
    ctx.pixelForTracking ?? ((accountId, pixelId) => ctx.store.pixels.getPixel(accountId, pixelId))
  );
}
