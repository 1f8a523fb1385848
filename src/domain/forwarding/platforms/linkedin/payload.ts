/**
 * LinkedIn Conversions API requests (learn.microsoft.com/en-us/linkedin/marketing/integrations/
 * ads-reporting/conversions-api): `POST /conversionEvents` with `LinkedIn-Version`,
 * `X-Restli-Protocol-Version: 2.0.0` and `X-RestLi-Method: BATCH_CREATE`, body `{elements:
 * [{conversion: "urn:lla:llaPartnerConversion:<rule>", conversionHappenedAt (ms),
 * conversionValue?: {currencyCode, amount (a decimal string)}, eventId, user: {userIds}}]}`.
 * The access token is the engine's (module `auth`).
 *
 * Each event counts for the conversion rule its name maps to (`config.conversion_rules`); one
 * without is skipped. `user.userIds` carries the hashed email (`SHA256_EMAIL`) and the
 * `li_fat_id` click id (`LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID`); LinkedIn refuses an element
 * without either, so such an event is skipped here. `eventId` is ours (LinkedIn deduplicates on
 * it with the Insight Tag's).
 */
import {
  type BuildOptions,
  type BuiltBatch,
  type ForwardableEvent,
  type PlatformModule,
  type PlatformRequest,
  prepareEvents,
} from '../platform.ts';
import { queryParam } from '../tiktok/payload.ts';
import type { LinkedinConfig } from './config.ts';
import type { LinkedinHashes } from './user-data.ts';

type Linkedin = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/**
 * The API version sent: LinkedIn sunsets each about a year after release (202511 went on
 * 2026-11-16), so it must be at most 12 months old (docs/decisions.md).
 */
export const LINKEDIN_VERSION = '202610';

function userIds(forwardable: ForwardableEvent): Array<{ idType: string; idValue: string }> {
  const ids: Array<{ idType: string; idValue: string }> = [];
  const email = (forwardable.hashes['linkedin'] as LinkedinHashes | undefined)?.email;
  if (email !== undefined) ids.push({ idType: 'SHA256_EMAIL', idValue: email });
  // The first-party cookie's value, or the ad click's `li_fat_id` on the landing page URL.
  const keys = forwardable.matchKeys;
  const click =
    keys === null ? undefined : (keys.liFatId ?? queryParam(forwardable.event.url, 'li_fat_id'));
  if (click !== undefined) {
    ids.push({ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: click });
  }
  return ids;
}

export function buildLinkedinRequests(
  linkedin: Linkedin,
  events: ForwardableEvent[],
  config: LinkedinConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    linkedin,
    events,
    config.event_names,
    options.now,
    (forwardable, name) => {
      const rule = config.conversion_rules[name];
      if (rule === undefined) {
        return `no LinkedIn conversion rule for ${name} (config.conversion_rules)`;
      }
      const ids = userIds(forwardable);
      if (ids.length === 0) return 'LinkedIn needs an email or a li_fat_id click id';
      const { event } = forwardable;
      const element: Record<string, unknown> = {
        conversion: `urn:lla:llaPartnerConversion:${rule}`,
        conversionHappenedAt: event.timestamp.getTime(),
        eventId: event.eventId,
        user: { userIds: ids },
      };
      if (event.value !== null && event.currency !== null) {
        element['conversionValue'] = { currencyCode: event.currency, amount: String(event.value) };
      }
      return element;
    },
  );
  const requests: PlatformRequest[] = parts.map((part) => ({
    method: 'POST',
    path: '/conversionEvents',
    redactedPath: '/conversionEvents',
    headers: {
      'content-type': 'application/json',
      'linkedin-version': LINKEDIN_VERSION,
      'x-restli-protocol-version': '2.0.0',
      'x-restli-method': 'BATCH_CREATE',
    },
    body: { elements: part.map((e) => e.body) },
    eventIds: part.map((e) => e.eventId),
  }));
  return { requests, skipped, notes: [] };
}

/** A request cut to `[start, end)` of its elements. */
export function linkedinSubRequest(
  request: PlatformRequest,
  start: number,
  end: number,
): PlatformRequest {
  const elements = request.body['elements'] as unknown[];
  return {
    ...request,
    body: { ...request.body, elements: elements.slice(start, end) },
    eventIds: request.eventIds.slice(start, end),
  };
}
