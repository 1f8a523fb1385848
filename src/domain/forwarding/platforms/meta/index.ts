/**
 * Meta Conversions API (developers.facebook.com/docs/marketing-api/conversions-api): everything
 * particular to Meta, as the registry's one entry for it.
 */
import { DAY_MS, dataSubRequest, type PlatformModule } from '../platform.ts';
import { META_FORM, type MetaConfig, MetaConfigSchema } from './config.ts';
import { buildMetaRequests } from './payload.ts';
import { classifyMetaAnswer } from './response.ts';
import { metaHashes, metaHashesOfRecord } from './user-data.ts';

export const meta: PlatformModule = {
  type: 'meta',
  name: 'Meta',
  label: 'Meta (Conversions API)',
  config: {
    schema: MetaConfigSchema,
    secrets: ['access_token'],
    // Code 100/33 refuses a pixel the token may not reach: correcting it is new credentials.
    credentials: ['access_token', 'pixel_id'],
    form: META_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_META_API_URL',
    default: 'https://graph.facebook.com/v24.0',
    description:
      "Meta Conversions API base URL (the operator's: not subject to the webhook SSRF rules)",
  },
  // Meta: at most 1,000 events in `data`; no maximum body size is documented.
  limits: { eventsPerRequest: 1_000, bytesPerRequest: null },
  // Meta refuses events older than 7 days, and one stale event fails its whole request;
  // physical_store events may be 62 days old (conversions-api/using-the-api).
  windowMs: (actionSource) => (actionSource === 'physical_store' ? 62 : 7) * DAY_MS,
  // Our standard names are Meta's standard events.
  defaultNames: {},
  eventName: (eventName, overrides) => ({ name: overrides?.[eventName] ?? eventName }),
  userData: (_raw, contact) => ({ hashes: metaHashes(contact) as Record<string, string> }),
  hashesOfRecord: (userData) => metaHashesOfRecord(userData) as Record<string, string>,
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildMetaRequests(meta, events, config as MetaConfig, options),
  classify: classifyMetaAnswer,
  // Meta rejects a whole request for one invalid event: a refusal is bisected.
  subRequest: dataSubRequest,
  receiptKeys: ['fbtrace_id', 'events_received'],
  consent: {
    // Meta takes no consent signal: an event without consent to send user data is not sent.
    signal: false,
    limitedDataUse: true,
    describe: (consent) =>
      consent.limited_data_use === true
        ? 'data_processing_options ["LDU"], country 0 and state 0 (Meta geolocates)'
        : 'sent as usual (Meta takes no ad_personalization signal)',
  },
};
