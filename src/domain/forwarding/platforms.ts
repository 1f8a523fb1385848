/**
 * The ad platforms Trackway forwards to, and the documented limits every part of forwarding
 * shares (contract §12; sources in docs/decisions.md, "Forwarding: platform facts and mappings").
 */
export const PLATFORMS = ['meta', 'ga4', 'tiktok'] as const;
export type Platform = (typeof PLATFORMS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Most events one request may carry. */
export const MAX_EVENTS_PER_REQUEST: Record<Platform, number> = {
  meta: 1_000,
  ga4: 25,
  tiktok: 1_000,
};

/**
 * How old an event may be when it is sent. Meta refuses events older than 7 days (and one stale
 * event fails its whole request); GA4 accepts backdating by 72 hours and silently drops older
 * events. TikTok documents no maximum age; its raw match keys are erased after 7 days anyway
 * (contract §11), so no window is applied here.
 */
export const PLATFORM_WINDOW_MS: Record<Platform, number | null> = {
  meta: 7 * DAY_MS,
  ga4: 72 * HOUR_MS,
  tiktok: null,
};

/** Why an event older than its platform's window is not sent (the `skipped` reason). */
export function outsideWindowReason(platform: Platform, timestamp: Date, now: Date): string | null {
  const window = PLATFORM_WINDOW_MS[platform];
  if (window === null || now.getTime() - timestamp.getTime() <= window) return null;
  return platform === 'meta'
    ? "outside Meta's 7-day window: the event is older than 7 days"
    : "outside GA4's 72-hour window: the event is older than 72 hours";
}
