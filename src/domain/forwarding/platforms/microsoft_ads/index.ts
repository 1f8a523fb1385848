/**
 * Microsoft Advertising UET Conversions API (capi.uet.microsoft.com/v1/{tag_id}/events):
 * everything particular to Microsoft, as the registry's one entry for it.
 */
import { DAY_MS, dataSubRequest, type PlatformModule } from '../platform.ts';
import { MICROSOFT_ADS_FORM, type MicrosoftAdsConfig, MicrosoftAdsConfigSchema } from './config.ts';
import { buildMicrosoftAdsRequests, PAGE_LOAD } from './payload.ts';
import { classifyMicrosoftAdsAnswer } from './response.ts';
import { microsoftAdsHashesOfRecord } from './user-data.ts';

/**
 * Our standard names → UET's: a page view is the `pageLoad` event type; the others are
 * custom events under UET's recommended event actions (GA4's names, which UET's goals and
 * stape's tag use; docs/decisions.md). Other names go as they are.
 */
const MICROSOFT_ADS_NAMES: Readonly<Record<string, string>> = {
  PageView: PAGE_LOAD,
  ViewContent: 'view_item',
  AddToCart: 'add_to_cart',
  InitiateCheckout: 'begin_checkout',
  AddPaymentInfo: 'add_payment_info',
  Purchase: 'purchase',
  Lead: 'generate_lead',
  CompleteRegistration: 'sign_up',
  Search: 'search',
  Subscribe: 'subscribe',
};

export const microsoftAds: PlatformModule = {
  type: 'microsoft_ads',
  name: 'Microsoft',
  label: 'Microsoft Advertising (UET Conversions API)',
  config: {
    schema: MicrosoftAdsConfigSchema,
    secrets: ['access_token'],
    // A 401 refuses the token for this tag: a new token or another tag may fix it.
    credentials: ['access_token', 'tag_id'],
    form: MICROSOFT_ADS_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_MICROSOFT_ADS_API_URL',
    default: 'https://capi.uet.microsoft.com/v1',
    description: 'Microsoft Advertising UET Conversions API base URL',
  },
  // 1,000 events a request (Segment's batch size; Tealium's 1,000 events and 1 MB).
  limits: { eventsPerRequest: 1_000, bytesPerRequest: 1_000_000 },
  // Microsoft documents no age limit for the Conversions API: 90 days, its offline
  // conversions' click window (docs/decisions.md). An older event it refuses fails by index.
  windowMs: () => 90 * DAY_MS,
  defaultNames: MICROSOFT_ADS_NAMES,
  eventName: (eventName, overrides) => ({
    name: overrides?.[eventName] ?? MICROSOFT_ADS_NAMES[eventName] ?? eventName,
  }),
  userData: (_raw, contact) => ({
    hashes: microsoftAdsHashesOfRecord(contact.hashes) as Record<string, string>,
  }),
  hashesOfRecord: (userData) => microsoftAdsHashesOfRecord(userData) as Record<string, string>,
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildMicrosoftAdsRequests(microsoftAds, events, config as MicrosoftAdsConfig, options),
  classify: classifyMicrosoftAdsAnswer,
  // Per-event errors come by index; a request refused whole (a 400 without them) is bisected.
  subRequest: dataSubRequest,
  testMode: false,
  receiptKeys: ['eventsReceived', 'traceId'],
  consent: {
    signal: false,
    limitedDataUse: false,
    describe: (consent) =>
      consent.ad_user_data === 'granted'
        ? 'adStorageConsent: "G"'
        : 'sent without adStorageConsent (Microsoft applies the tag’s default)',
  },
};
