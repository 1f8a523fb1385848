import type { PixelStore } from '../../../domain/ports/pixel-store.ts';
import * as pixels from '../../queries/pixels.ts';
import type { Runner } from '../query.ts';

export function pixelStore({ sql: db, read, transaction }: Runner): PixelStore {
  return {
    createPixel: (pixel, quota, emit) =>
      transaction(() => pixels.createPixel(db, pixel, quota, emit)),
    getPixel: (accountId, id) => read(() => pixels.getPixel(db, accountId, id)),
    listPixels: (accountId, page) => read(() => pixels.listPixels(db, accountId, page)),
    updatePixel: (accountId, id, change) =>
      transaction(() => pixels.updatePixel(db, accountId, id, change)),
    findByPublishableKey: (key, now) => read(() => pixels.findByPublishableKey(db, key, now)),
    isPixelSite: (hostname) => read(() => pixels.isPixelSite(db, hostname)),
  };
}
