/**
 * TikTok Events API 2.0 (business-api.tiktok.com/open_api/v1.3/event/track/): everything
 * particular to TikTok, as the registry's one entry for it.
 */
import { dataSubRequest, type PlatformModule } from '../platform.ts';
import { TIKTOK_FORM, type TiktokConfig, TiktokConfigSchema } from './config.ts';
import { buildTiktokRequests } from './payload.ts';
import { classifyTiktokAnswer } from './response.ts';
import { tiktokUserDataHashes } from './user-data.ts';

/**
 * Our standard names → TikTok's standard events (ads.tiktok.com/help/article/
 * supported-standard-events): TikTok now lists `Purchase` and `Lead` themselves (they replace
 * `CompletePayment` and `SubmitForm`), so all ten of ours are TikTok's names as they are.
 */
const TIKTOK_NAMES: Readonly<Record<string, string>> = {
  PageView: 'PageView',
  ViewContent: 'ViewContent',
  AddToCart: 'AddToCart',
  InitiateCheckout: 'InitiateCheckout',
  AddPaymentInfo: 'AddPaymentInfo',
  Purchase: 'Purchase',
  Lead: 'Lead',
  CompleteRegistration: 'CompleteRegistration',
  Search: 'Search',
  Subscribe: 'Subscribe',
};

export const tiktok: PlatformModule = {
  type: 'tiktok',
  name: 'TikTok',
  label: 'TikTok',
  config: {
    schema: TiktokConfigSchema,
    secrets: ['access_token'],
    // TikTok 40001 refuses a pixel the token may not reach: correcting it is new credentials.
    credentials: ['access_token', 'pixel_code'],
    form: TIKTOK_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_TIKTOK_API_URL',
    default: 'https://business-api.tiktok.com/open_api/v1.3',
    description: 'TikTok Events API base URL',
  },
  // 1,000 events a request; no body size is documented.
  limits: { eventsPerRequest: 1_000, bytesPerRequest: null },
  // TikTok documents no maximum age; its raw match keys are erased after 7 days anyway.
  windowMs: () => null,
  defaultNames: TIKTOK_NAMES,
  eventName: (eventName, overrides) => ({
    name: overrides?.[eventName] ?? TIKTOK_NAMES[eventName] ?? eventName,
  }),
  userData: (raw, contact) => {
    const { hashes, location } = tiktokUserDataHashes(raw, contact);
    return {
      hashes: hashes as Record<string, string>,
      location: location as Record<string, string>,
    };
  },
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildTiktokRequests(tiktok, events, config as TiktokConfig, options),
  classify: classifyTiktokAnswer,
  // TikTok is reported to refuse a whole request for one bad event, as Meta does: bisected.
  subRequest: dataSubRequest,
  receiptKeys: ['request_id', 'code'],
  consent: {
    // TikTok takes no consent signal: an event without consent to send user data is not sent.
    signal: false,
    limitedDataUse: true,
    describe: (consent) =>
      consent.limited_data_use === true
        ? 'limited_data_use: true'
        : 'sent as usual (TikTok takes no ad_personalization signal)',
  },
};
