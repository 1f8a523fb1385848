/**
 * Google Ads through the Data Manager API (datamanager.googleapis.com/v1/events:ingest):
 * everything particular to Google Ads, as the registry's one entry for it.
 */
import { DAY_MS, type PlatformModule, type TokenGrant } from '../platform.ts';
import {
  checkGoogleAdsConfig,
  GOOGLE_ADS_FORM,
  type GoogleAdsConfig,
  GoogleAdsConfigSchema,
} from './config.ts';
import { buildGoogleAdsRequests, googleAdsSubRequest, googleConsent } from './payload.ts';
import { classifyGoogleAdsAnswer } from './response.ts';
import { googleAdsUserData } from './user-data.ts';

/** Google's token URL: a service account's JWT names it as `aud` wherever the token is fetched. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** The Data Manager API's OAuth scope (ingestion_service.proto). */
export const DATAMANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';

export const googleAds: PlatformModule = {
  type: 'google_ads',
  name: 'Google Ads',
  label: 'Google Ads (Data Manager API)',
  config: {
    schema: GoogleAdsConfigSchema,
    secrets: ['oauth.client_secret', 'oauth.refresh_token', 'service_account.private_key'],
    // 403 refuses a customer the credentials may not reach: correcting either resumes.
    credentials: ['oauth', 'service_account', 'customer_id', 'login_customer_id'],
    form: GOOGLE_ADS_FORM,
    check: checkGoogleAdsConfig,
  },
  baseUrl: {
    env: 'TRACKWAY_GOOGLE_ADS_API_URL',
    default: 'https://datamanager.googleapis.com/v1',
    description: 'Google Ads Data Manager API base URL',
  },
  auth: {
    tokenUrl: {
      env: 'TRACKWAY_GOOGLE_OAUTH_URL',
      default: GOOGLE_TOKEN_URL,
      description: 'Google OAuth token URL (Google Ads access tokens)',
    },
    grant: (config): TokenGrant => {
      const c = config as GoogleAdsConfig;
      if (c.service_account !== undefined) {
        return {
          kind: 'jwt_bearer',
          issuer: c.service_account.client_email,
          privateKey: c.service_account.private_key,
          scope: DATAMANAGER_SCOPE,
          audience: GOOGLE_TOKEN_URL,
        };
      }
      // The config's check makes one of the two present.
      const oauth = c.oauth!;
      return {
        kind: 'refresh_token',
        clientId: oauth.client_id,
        clientSecret: oauth.client_secret,
        refreshToken: oauth.refresh_token,
      };
    },
  },
  // 2,000 events a request (Data Manager limits); no body size is documented.
  limits: { eventsPerRequest: 2_000, bytesPerRequest: null },
  // Google refuses EVENT_TOO_OLD without a figure; a conversion action's click-through window
  // is at most 90 days (docs/decisions.md).
  windowMs: () => 90 * DAY_MS,
  // No event names: an event counts for the conversion action its name maps to.
  defaultNames: {},
  eventName: (eventName, overrides) => ({ name: overrides?.[eventName] ?? eventName }),
  userData: (raw, contact) => {
    const { hashes, location } = googleAdsUserData(raw, contact);
    // Nothing stored apart when there is no address part to keep.
    return Object.keys(location).length === 0
      ? { hashes: hashes as Record<string, string> }
      : { hashes: hashes as Record<string, string>, location: location as Record<string, string> };
  },
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildGoogleAdsRequests(googleAds, events, config as GoogleAdsConfig, options),
  classify: classifyGoogleAdsAnswer,
  // One invalid event fails the whole request: bisected to it.
  subRequest: googleAdsSubRequest,
  receiptKeys: ['requestId'],
  consent: {
    // Google takes Consent Mode's signals per event; it has no restricted-processing mode.
    signal: true,
    limitedDataUse: false,
    describe: (consent) => {
      const sent = googleConsent(consent);
      const signal = sent ? `consent ${JSON.stringify(sent)}` : 'no consent signal';
      return consent.ad_user_data === 'denied'
        ? `${signal}; no user data sent (click ids only)`
        : signal;
    },
  },
};
