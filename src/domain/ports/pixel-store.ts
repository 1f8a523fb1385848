import type { Pixel, WebhookEvent } from '../model.ts';
import type { Change, Page } from './common.ts';

export interface PixelStore {
  /** Creates the pixel unless the account already holds `quota` pixels (checked atomically). */
  createPixel(
    pixel: Pixel,
    quota: number | null,
    emit: WebhookEvent[],
  ): Promise<'created' | 'quota_exceeded'>;
  getPixel(accountId: string, pixelId: string): Promise<Pixel | null>;
  listPixels(accountId: string, page: Page): Promise<{ pixels: Pixel[]; total: number }>;
  updatePixel(
    accountId: string,
    pixelId: string,
    change: Change<Pixel>,
  ): Promise<{ before: Pixel; after: Pixel } | null>;
  /**
   * The pixel (of any account) a publishable key opens: its current key, or the previous one
   * until that expires at `now`.
   */
  findByPublishableKey(key: string, now: Date): Promise<Pixel | null>;
  /** Whether the hostname is an active pixel's domain, a subdomain of it, or its tracking domain. */
  isPixelSite(hostname: string): Promise<boolean>;
}
