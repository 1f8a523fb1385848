/**
 * @trackway/node: Trackway's client for Node 20+ and any runtime with `fetch` and Web Crypto.
 *
 *   const trackway = new Trackway({ apiKey, baseUrl: 'https://trackway.example.com' });
 *   trackway.track({ pixel_id, event_name: 'Purchase', value: 49.99, currency: 'USD' });
 *   await trackway.close();
 */
export type { TrackResult } from './batcher.ts';
export { newEventId } from './batcher.ts';
export { Trackway, type TrackwayOptions } from './client.ts';
export {
  TrackwayApiError,
  TrackwayNetworkError,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from './errors.ts';
export { EventStream } from './event-stream.ts';
export type * from './types.ts';
export { type HeadersLike, type VerifyWebhookOptions, verifyWebhook } from './webhooks.ts';
