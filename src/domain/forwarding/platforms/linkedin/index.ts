/**
 * LinkedIn Conversions API (api.linkedin.com/rest/conversionEvents): everything particular to
 * LinkedIn, as the registry's one entry for it.
 */
import { DAY_MS, type PlatformModule } from '../platform.ts';
import { LINKEDIN_FORM, type LinkedinConfig, LinkedinConfigSchema } from './config.ts';
import { buildLinkedinRequests, linkedinSubRequest } from './payload.ts';
import { classifyLinkedinAnswer } from './response.ts';
import { linkedinUserData } from './user-data.ts';

export const linkedin: PlatformModule = {
  type: 'linkedin',
  name: 'LinkedIn',
  label: 'LinkedIn (Conversions API)',
  config: {
    schema: LinkedinConfigSchema,
    secrets: ['oauth.client_secret', 'oauth.refresh_token'],
    credentials: ['oauth'],
    form: LINKEDIN_FORM,
  },
  baseUrl: {
    env: 'TRACKWAY_LINKEDIN_API_URL',
    default: 'https://api.linkedin.com/rest',
    description: 'LinkedIn Conversions API base URL',
  },
  auth: {
    tokenUrl: {
      env: 'TRACKWAY_LINKEDIN_OAUTH_URL',
      default: 'https://www.linkedin.com/oauth/v2/accessToken',
      description: 'LinkedIn OAuth token URL (LinkedIn access tokens)',
    },
    grant: (config) => {
      const { oauth } = config as LinkedinConfig;
      return {
        kind: 'refresh_token',
        clientId: oauth.client_id,
        clientSecret: oauth.client_secret,
        refreshToken: oauth.refresh_token,
      };
    },
  },
  // 5,000 elements a BATCH_CREATE (Salesforce's LinkedIn connector); no body size documented.
  limits: { eventsPerRequest: 5_000, bytesPerRequest: null },
  // "conversionHappenedAt … within the past 90 days".
  windowMs: () => 90 * DAY_MS,
  // No event names: an event counts for the conversion rule its name maps to.
  defaultNames: {},
  eventName: (eventName, overrides) => ({ name: overrides?.[eventName] ?? eventName }),
  userData: (_raw, contact) => ({
    hashes: linkedinUserData(contact) as Record<string, string>,
  }),
  build: (events, config, options) =>
    // Configs were validated against the schema when the destination was saved.
    buildLinkedinRequests(linkedin, events, config as LinkedinConfig, options),
  classify: classifyLinkedinAnswer,
  subRequest: linkedinSubRequest,
  receiptKeys: [],
  // No test mode: the test send builds and checks, and sends nothing (contract §18).
  testMode: false,
  consent: {
    signal: false,
    limitedDataUse: false,
    describe: () => 'sent as usual (LinkedIn takes no consent signal)',
  },
};
