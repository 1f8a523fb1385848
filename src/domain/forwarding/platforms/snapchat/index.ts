/**
 * Snapchat Conversions API v3 (tr.snapchat.com/v3/{pixel_id}/events): everything particular
 * to Snapchat, as the registry's one entry for it.
 */
import { DAY_MS, dataSubRequest, type PlatformModule } from '../platform.ts';
import { SNAPCHAT_FORM, type SnapchatConfig, SnapchatConfigSchema } from './config.ts';
import { buildSnapchatRequests } from './payload.ts';
import { classifySnapchatAnswer } from './response.ts';
import { snapchatUserDataHashes } from './user-data.ts';

/**
 * Our standard names → Snapchat's (upper case; Segment's Snap presets and stape's Snap tag):
 * Snapchat has no lead event, so a lead is a `SIGN_UP`, as stape maps it.
 */
const SNAPCHAT_NAMES: Readonly<Record<string, string>> = {
  PageView: 'PAGE_VIEW',
  ViewContent: 'VIEW_CONTENT',
  AddToCart: 'ADD_CART',
  InitiateCheckout: 'START_CHECKOUT',
  AddPaymentInfo: 'ADD_BILLING',
  Purchase: 'PURCHASE',
  Lead: 'SIGN_UP',
  CompleteRegistration: 'SIGN_UP',
  Search: 'SEARCH',
  Subscribe: 'SUBSCRIBE',
};

/** Snapchat's standard names: it takes no others (docs/decisions.md). */
const SNAPCHAT_EVENT_NAMES = new Set([
  ...Object.values(SNAPCHAT_NAMES),
  'LIST_VIEW',
  'ADD_TO_WISHLIST',
  'LOGIN',
  'SHARE',
  'SAVE',
  'RESERVE',
  'START_TRIAL',
  'COMPLETE_TUTORIAL',
  'CUSTOM_EVENT_1',
  'CUSTOM_EVENT_2',
  'CUSTOM_EVENT_3',
  'CUSTOM_EVENT_4',
  'CUSTOM_EVENT_5',
]);

export const snapchat: PlatformModule = {
  type: 'snapchat',
  name: 'Snapchat',
  label: 'Snapchat (Conversions API)',
  config: {
    schema: SnapchatConfigSchema,
    secrets: ['access_token'],
    credentials: ['access_token', 'pixel_id'],
    form: SNAPCHAT_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_SNAPCHAT_API_URL',
    default: 'https://tr.snapchat.com/v3',
    description: 'Snapchat Conversions API base URL',
  },
  // Snap documents no maximum; 2,000 events is what two connectors send (docs/decisions.md).
  limits: { eventsPerRequest: 2_000, bytesPerRequest: null },
  // "Events up to 37 days old" (Snap's Conversions API introduction).
  windowMs: () => 37 * DAY_MS,
  defaultNames: SNAPCHAT_NAMES,
  eventName: (eventName, overrides) => {
    const name = overrides?.[eventName] ?? SNAPCHAT_NAMES[eventName] ?? eventName;
    return SNAPCHAT_EVENT_NAMES.has(name)
      ? { name }
      : {
          skipped: `Snapchat takes only its standard event names: map ${eventName} with config.event_names (e.g. to CUSTOM_EVENT_1)`,
        };
  },
  userData: (_raw, contact) => ({
    hashes: snapchatUserDataHashes(contact) as Record<string, string>,
  }),
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildSnapchatRequests(snapchat, events, config as SnapchatConfig, options),
  classify: classifySnapchatAnswer,
  // A 400 INVALID refuses the request: bisected to the bad event.
  subRequest: dataSubRequest,
  receiptKeys: ['status', 'test_event'],
  consent: {
    signal: false,
    limitedDataUse: true,
    describe: (consent) =>
      consent.limited_data_use === true
        ? 'data_processing_options: ["LDU"] (country and state 0: Snap geolocates)'
        : 'sent as usual (Snapchat takes no ad_personalization signal)',
  },
};
