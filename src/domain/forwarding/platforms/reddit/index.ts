/**
 * Reddit Conversions API v3 (ads-api.reddit.com/api/v3/pixels/{pixel_id}/conversion_events):
 * everything particular to Reddit, as the registry's one entry for it.
 */
import { DAY_MS, type PlatformModule } from '../platform.ts';
import { REDDIT_FORM, type RedditConfig, RedditConfigSchema } from './config.ts';
import { buildRedditRequests, redditSubRequest } from './payload.ts';
import { classifyRedditAnswer } from './response.ts';
import { redditUserDataHashes } from './user-data.ts';

/**
 * Our standard names → Reddit's tracking types (upper case). Reddit has none for a checkout, a
 * payment method or a subscription: those go as `CUSTOM` with our name (docs/decisions.md).
 */
const REDDIT_NAMES: Readonly<Record<string, string>> = {
  PageView: 'PAGE_VISIT',
  ViewContent: 'VIEW_CONTENT',
  AddToCart: 'ADD_TO_CART',
  Purchase: 'PURCHASE',
  Lead: 'LEAD',
  CompleteRegistration: 'SIGN_UP',
  Search: 'SEARCH',
};

export const reddit: PlatformModule = {
  type: 'reddit',
  name: 'Reddit',
  label: 'Reddit (Conversions API)',
  config: {
    schema: RedditConfigSchema,
    secrets: ['access_token'],
    credentials: ['access_token', 'pixel_id'],
    form: REDDIT_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_REDDIT_API_URL',
    default: 'https://ads-api.reddit.com/api/v3',
    description: 'Reddit Conversions API base URL',
  },
  // 1,000 events a request (RudderStack's maxBatchSize); no body size is documented.
  limits: { eventsPerRequest: 1_000, bytesPerRequest: null },
  // "Conversion events must be sent within 7 days" (Reddit's help centre).
  windowMs: () => 7 * DAY_MS,
  defaultNames: REDDIT_NAMES,
  // A name that is not a tracking type goes as CUSTOM with that name (payload.ts).
  eventName: (eventName, overrides) => ({
    name: overrides?.[eventName] ?? REDDIT_NAMES[eventName] ?? eventName,
  }),
  userData: (raw, contact) => ({
    hashes: redditUserDataHashes(raw, contact) as Record<string, string>,
  }),
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildRedditRequests(reddit, events, config as RedditConfig, options),
  classify: classifyRedditAnswer,
  subRequest: redditSubRequest,
  receiptKeys: ['message'],
  consent: {
    signal: false,
    limitedDataUse: true,
    describe: (consent) =>
      consent.limited_data_use === true
        ? 'user.data_processing_options: {modes: ["LDU"]}'
        : 'sent as usual (Reddit takes no ad_personalization signal)',
  },
};
