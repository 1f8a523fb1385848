/**
 * GA4 Measurement Protocol (developers.google.com/analytics/devguides/collection/protocol/ga4):
 * everything particular to GA4, as the registry's one entry for it.
 */
import { HOUR_MS, type PlatformModule } from '../platform.ts';
import { GA4_FORM, type Ga4Config, Ga4ConfigSchema } from './config.ts';
import { GA4_NAMES, ga4EventName } from './names.ts';
import { buildGa4Requests, ga4Consent } from './payload.ts';
import { classifyGa4Answer } from './response.ts';
import { ga4UserDataHashes } from './user-data.ts';

export const ga4: PlatformModule = {
  type: 'ga4',
  name: 'GA4',
  label: 'Google Analytics 4',
  config: {
    schema: Ga4ConfigSchema,
    secrets: ['api_secret'],
    credentials: ['api_secret', 'measurement_id'],
    form: GA4_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_GA4_API_URL',
    default: 'https://www.google-analytics.com',
    description: 'GA4 Measurement Protocol base URL',
  },
  // 25 events a request; the body under 130 kB (sending-events#limitations).
  limits: { eventsPerRequest: 25, bytesPerRequest: 130_000 },
  // GA4 accepts backdating by 72 hours and silently drops older events.
  windowMs: () => 72 * HOUR_MS,
  defaultNames: GA4_NAMES,
  eventName: ga4EventName,
  userData: (raw, contact) => {
    const { hashes, location } = ga4UserDataHashes(raw, contact);
    return {
      hashes: hashes as Record<string, string>,
      location: location as Record<string, string>,
    };
  },
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildGa4Requests(ga4, events, config as Ga4Config, options),
  classify: classifyGa4Answer,
  // GA4 never refuses one event of a request (it answers 2xx to anything): no bisection.
  receiptKeys: [],
  consent: {
    // GA4 takes Consent Mode's signals; limited data use becomes ad_personalization denied.
    signal: true,
    limitedDataUse: true,
    describe: (consent) => {
      const sent = ga4Consent(consent);
      const signal = sent ? `consent ${JSON.stringify(sent)}` : 'no consent signal';
      return consent.ad_user_data === 'denied'
        ? `${signal}; no user identifier sent (client_id only)`
        : signal;
    },
  },
};
