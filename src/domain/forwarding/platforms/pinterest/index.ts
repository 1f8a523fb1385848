/**
 * Pinterest Conversions API v5 (api.pinterest.com/v5/ad_accounts/{id}/events): everything
 * particular to Pinterest, as the registry's one entry for it.
 */
import { DAY_MS, dataSubRequest, type PlatformModule } from '../platform.ts';
import { PINTEREST_FORM, type PinterestConfig, PinterestConfigSchema } from './config.ts';
import { buildPinterestRequests } from './payload.ts';
import { classifyPinterestAnswer } from './response.ts';
import { pinterestUserDataHashes } from './user-data.ts';

/**
 * Our standard names → Pinterest's `event_name` enum (developers.pinterest.com/docs/api/v5/
 * events-create): a purchase is Pinterest's `checkout`, a registration its `signup`.
 */
const PINTEREST_NAMES: Readonly<Record<string, string>> = {
  PageView: 'page_visit',
  ViewContent: 'view_content',
  AddToCart: 'add_to_cart',
  InitiateCheckout: 'initiate_checkout',
  AddPaymentInfo: 'add_payment_info',
  Purchase: 'checkout',
  Lead: 'lead',
  CompleteRegistration: 'signup',
  Search: 'search',
  Subscribe: 'subscribe',
};

/** Pinterest takes only its enum; any other name is its `custom` event (docs/decisions.md). */
const PINTEREST_EVENT_NAMES = new Set([
  ...Object.values(PINTEREST_NAMES),
  'add_to_wishlist',
  'app_install',
  'custom',
  'view_category',
  'watch_video',
]);

export const pinterest: PlatformModule = {
  type: 'pinterest',
  name: 'Pinterest',
  label: 'Pinterest (Conversions API)',
  config: {
    schema: PinterestConfigSchema,
    secrets: ['access_token'],
    // 403 (code 29) refuses an ad account the token may not reach: correcting it is new credentials.
    credentials: ['access_token', 'ad_account_id'],
    form: PINTEREST_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_PINTEREST_API_URL',
    default: 'https://api.pinterest.com/v5',
    description: 'Pinterest Conversions API base URL',
  },
  // 1,000 events a request; no body size is documented.
  limits: { eventsPerRequest: 1_000, bytesPerRequest: null },
  // Pinterest refuses events "too far in the past" without saying how far: 7 days, as the
  // other click-attribution APIs (docs/decisions.md).
  windowMs: () => 7 * DAY_MS,
  defaultNames: PINTEREST_NAMES,
  eventName: (eventName, overrides) => {
    const name = overrides?.[eventName] ?? PINTEREST_NAMES[eventName] ?? eventName;
    return { name: PINTEREST_EVENT_NAMES.has(name) ? name : 'custom' };
  },
  userData: (_raw, contact) => ({
    hashes: pinterestUserDataHashes(contact) as Record<string, string>,
  }),
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildPinterestRequests(pinterest, events, config as PinterestConfig, options),
  classify: classifyPinterestAnswer,
  // A 422 keeps none of the request's events: bisected to the bad one.
  subRequest: dataSubRequest,
  receiptKeys: ['num_events_received', 'num_events_processed'],
  consent: {
    signal: false,
    limitedDataUse: true,
    describe: (consent) =>
      consent.limited_data_use === true
        ? 'custom_data.opt_out_type: "LDP"'
        : 'sent as usual (Pinterest takes no ad_personalization signal)',
  },
};
