/**
 * Each platform's stand-in server, by destination type: what the benchmarks (and any suite that
 * runs over every platform) start to forward to. Adding a platform adds its stand-in here.
 */
import { createHash } from 'node:crypto';
import { PLATFORMS, type Platform } from '../../src/domain/forwarding/platforms/registry.ts';
import { startGa4Server } from './ga4-server.ts';
import { startGoogleAdsServer } from './google-ads-server.ts';
import type { PlatformServer, ReceivedRequest } from './http-server.ts';
import { startLinkedinServer } from './linkedin-server.ts';
import { startMetaServer } from './meta-server.ts';
import { startMicrosoftAdsServer } from './microsoft-ads-server.ts';
import { startPinterestServer } from './pinterest-server.ts';
import { startRedditServer } from './reddit-server.ts';
import { startSnapchatServer } from './snapchat-server.ts';
import { startTiktokServer } from './tiktok-server.ts';

export interface StandIn {
  /** The base URL to set as the platform's `TRACKWAY_<TYPE>_API_URL`. */
  baseUrl: string;
  /** Every event the stand-in accepted (it validated it). */
  events: unknown[];
  /** Events it was sent again and deduplicated. */
  duplicates(): number;
  /** The config of a destination that reaches it. */
  config: Record<string, unknown>;
  /** Its OAuth token URL, for a platform whose module declares `auth`. */
  tokenUrl?: string;
  /** Makes the access tokens it issued expire: the next request with one gets a 401. */
  expireTokens?(): void;
  /** Access tokens it issued so far. */
  tokensIssued?(): number;
  /**
   * What a website event carries in `user_data` for this platform, beyond email, IP and UA:
   * what it needs (GA4's client id) and its click ids and cookies (contract §18).
   */
  userData(person: string): Record<string, string>;
  /** The fields of an accepted event that `userData(person)`'s keys became at the platform… */
  keysOf(event: unknown): Record<string, unknown>;
  /** …and what they must be. */
  expectedKeys(person: string): Record<string, unknown>;
  /** The bench's name of a person, read back from an accepted event. */
  personOf(event: unknown): string;
  /** Whether the platform keeps our event id (else events are told apart by the person). */
  keepsEventId: boolean;
  /**
   * What tells our events apart at the platform: the event id where it keeps one, else the
   * last path segment of the page URL (GA4 keeps no event id), of an accepted event…
   */
  tagOf(event: unknown): string;
  /** …and of each event a request carried. */
  tagsIn(request: ReceivedRequest): string[];
  /** The server itself, for fault tests: its mode, requests, hanging and held answers. */
  server: FaultServer;
  /**
   * The platform refuses the event with this tag (a poisoned event), or none when `null`;
   * absent for a platform that refuses no single event (GA4).
   */
  poison?(tag: string | null): void;
  /** The modes beyond `down` and `hang` its server has: a refused token, throttling. */
  modes: ReadonlyArray<'expired' | 'throttled'>;
  close(): Promise<void>;
}

/** A stand-in server's controls, as every platform's has them. */
export interface FaultServer extends Omit<PlatformServer, 'mode'> {
  mode: string;
}

/**
 * Base URLs for every platform: the given ones, and `rest` (a local server that refuses them)
 * for the platforms a test does not forward to, so adding a platform changes no test.
 */
export function baseUrlsFor(
  given: Partial<Record<Platform, string>>,
  rest: string,
): Record<Platform, string> {
  return Object.fromEntries(PLATFORMS.map((type) => [type, given[type] ?? rest])) as Record<
    Platform,
    string
  >;
}

/** The token URLs of the stand-ins that have one (`TRACKWAY_<…>_OAUTH_URL`). */
export function tokenUrlsOf(
  standIns: Partial<Record<Platform, StandIn>>,
): Partial<Record<Platform, string>> {
  return Object.fromEntries(
    Object.entries(standIns).flatMap(([type, s]) => (s?.tokenUrl ? [[type, s.tokenUrl]] : [])),
  );
}

const byEventId = (e: unknown) => String((e as { event_id: string }).event_id);
/** The events of a request whose body holds them in `data` (most platforms). */
const dataOf = (request: ReceivedRequest): unknown[] => {
  const data = (request.json as { data?: unknown } | undefined)?.data;
  return Array.isArray(data) ? data : [];
};
/** A server's poisoned event: refused with a message when its tag is the one asked for. */
const poisoner =
  (
    server: { rejectEvent?: (event: Record<string, unknown>) => string | undefined },
    tagOf: (e: unknown) => string,
  ) =>
  (tag: string | null) => {
    if (tag === null) delete server.rejectEvent;
    else server.rejectEvent = (e) => (tagOf(e) === tag ? 'poisoned by the test' : undefined);
  };
const conversionId = (e: unknown) =>
  String((e as { metadata: { conversion_id: string } }).metadata.conversion_id);
const uetEventId = (e: unknown) => String((e as { eventId: string }).eventId);
const lastSegment = (url: unknown) =>
  String(url ?? '')
    .split('/')
    .pop() ?? '';
const noKeys = () => ({});
/** A field of a platform's user object, when present. */
const fieldsOf = (user: unknown, map: Record<string, string>) => {
  const out: Record<string, unknown> = {};
  for (const [ours, theirs] of Object.entries(map)) {
    const value = (user as Record<string, unknown> | undefined)?.[theirs];
    if (value !== undefined) out[ours] = value;
  }
  return out;
};
/** A UUID made from a person's name, for the cookies that hold one (`_rdt_uuid`). */
const uuidOf = (person: string) => {
  const hex = createHash('sha256').update(person).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

export const STAND_INS: Record<Platform, () => Promise<StandIn>> = {
  meta: async () => {
    const server = await startMetaServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { pixel_id: server.pixelId, access_token: server.accessToken },
      userData: () => ({}),
      keysOf: noKeys,
      expectedKeys: noKeys,
      personOf: byEventId,
      keepsEventId: true,
      tagOf: byEventId,
      tagsIn: (r) => dataOf(r).map(byEventId),
      server,
      poison: poisoner(server, byEventId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  ga4: async () => {
    const server = await startGa4Server();
    return {
      baseUrl: server.origin,
      events: server.events as unknown[],
      duplicates: () => 0,
      config: { measurement_id: server.measurementId, api_secret: server.apiSecret },
      // GA4 takes no event without the visitor's client id.
      userData: (person) => ({ ga_client_id: `${person}.1700000000` }),
      keysOf: (e) => ({ ga_client_id: (e as { client_id: string }).client_id }),
      expectedKeys: (person) => ({ ga_client_id: `${person}.1700000000` }),
      // GA4 keeps no event id: the bench's client id is `<person>.1700000000`.
      personOf: (e) => String((e as { client_id: string }).client_id).split('.')[0]!,
      keepsEventId: false,
      tagOf: (e) => lastSegment((e as { params: Record<string, unknown> }).params['page_location']),
      tagsIn: (r) => {
        const events = (
          r.json as { events?: Array<{ params?: Record<string, unknown> }> } | undefined
        )?.events;
        return (events ?? []).map((e) => lastSegment(e.params?.['page_location']));
      },
      server,
      modes: [],
      close: () => server.close(),
    };
  },
  tiktok: async () => {
    const server = await startTiktokServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { pixel_code: server.pixelCode, access_token: server.accessToken },
      userData: () => ({}),
      keysOf: noKeys,
      expectedKeys: noKeys,
      personOf: byEventId,
      keepsEventId: true,
      tagOf: byEventId,
      tagsIn: (r) => dataOf(r).map(byEventId),
      server,
      poison: poisoner(server, byEventId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  pinterest: async () => {
    const server = await startPinterestServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { ad_account_id: server.adAccountId, access_token: server.accessToken },
      userData: (person) => ({ epik: `dj0yJnU9${person}` }),
      keysOf: (e) => fieldsOf((e as { user_data: unknown }).user_data, { epik: 'click_id' }),
      expectedKeys: (person) => ({ epik: `dj0yJnU9${person}` }),
      personOf: byEventId,
      keepsEventId: true,
      tagOf: byEventId,
      tagsIn: (r) => dataOf(r).map(byEventId),
      server,
      poison: poisoner(server, byEventId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  snapchat: async () => {
    const server = await startSnapchatServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { pixel_id: server.pixelId, access_token: server.accessToken },
      userData: (person) => ({ ScCid: `sccid-${person}`, _scid: uuidOf(person) }),
      keysOf: (e) =>
        fieldsOf((e as { user_data: unknown }).user_data, {
          ScCid: 'sc_click_id',
          _scid: 'sc_cookie1',
        }),
      expectedKeys: (person) => ({ ScCid: `sccid-${person}`, _scid: uuidOf(person) }),
      personOf: byEventId,
      keepsEventId: true,
      tagOf: byEventId,
      tagsIn: (r) => dataOf(r).map(byEventId),
      server,
      poison: poisoner(server, byEventId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  reddit: async () => {
    const server = await startRedditServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { pixel_id: server.pixelId, access_token: server.accessToken },
      // The _rdt_uuid cookie is `<ms>.<uuid>`; Reddit is sent its uuid.
      userData: (person) => ({
        rdt_cid: `rdtcid-${person}`,
        _rdt_uuid: `1754915740517.${uuidOf(person)}`,
      }),
      keysOf: (e) => ({
        ...fieldsOf(e, { rdt_cid: 'click_id' }),
        ...fieldsOf((e as { user: unknown }).user, { _rdt_uuid: 'uuid' }),
      }),
      expectedKeys: (person) => ({ rdt_cid: `rdtcid-${person}`, _rdt_uuid: uuidOf(person) }),
      // Reddit keeps our event id as the conversion id.
      personOf: conversionId,
      keepsEventId: true,
      tagOf: conversionId,
      tagsIn: (r) =>
        ((r.json as { data?: { events?: unknown[] } } | undefined)?.data?.events ?? []).map(
          conversionId,
        ),
      server,
      poison: poisoner(server, conversionId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  microsoft_ads: async () => {
    const server = await startMicrosoftAdsServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { tag_id: server.tagId, access_token: server.accessToken },
      userData: (person) => ({ msclkid: `msclk-${person}`, _uetvid: `uetvid${person}` }),
      keysOf: (e) =>
        fieldsOf((e as { userData: unknown }).userData, {
          msclkid: 'msclkid',
          _uetvid: 'anonymousId',
        }),
      expectedKeys: (person) => ({ msclkid: `msclk-${person}`, _uetvid: `uetvid${person}` }),
      personOf: uetEventId,
      keepsEventId: true,
      tagOf: uetEventId,
      tagsIn: (r) => dataOf(r).map(uetEventId),
      server,
      poison: poisoner(server, uetEventId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  google_ads: async () => {
    const server = await startGoogleAdsServer();
    const [purchase, lead, view] = [...server.conversionActions];
    // Google keeps our event id as the transaction id.
    const transactionId = (e: unknown) => String((e as { transactionId: string }).transactionId);
    return {
      baseUrl: server.url,
      tokenUrl: server.tokenUrl,
      expireTokens: () => server.expireTokens(),
      tokensIssued: () => server.tokensIssued.refresh_token + server.tokensIssued.jwt_bearer,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: {
        customer_id: server.customerId,
        conversion_actions: { Purchase: purchase, Lead: lead, PageView: view },
        oauth: server.oauth,
      },
      userData: (person) => ({ gclid: `gclid-${person}` }),
      keysOf: (e) => fieldsOf((e as { adIdentifiers?: unknown }).adIdentifiers, { gclid: 'gclid' }),
      expectedKeys: (person) => ({ gclid: `gclid-${person}` }),
      personOf: transactionId,
      keepsEventId: true,
      tagOf: transactionId,
      tagsIn: (r) =>
        ((r.json as { events?: unknown[] } | undefined)?.events ?? []).map(transactionId),
      server,
      poison: poisoner(server, transactionId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
  linkedin: async () => {
    const server = await startLinkedinServer();
    const [purchase, lead, view] = [...server.rules];
    const eventId = (e: unknown) => String((e as { eventId: string }).eventId);
    return {
      baseUrl: server.url,
      tokenUrl: server.tokenUrl,
      expireTokens: () => server.expireTokens(),
      tokensIssued: () => server.tokensIssued,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: {
        ad_account_id: server.adAccountId,
        conversion_rules: { Purchase: purchase, Lead: lead, PageView: view },
        oauth: server.oauth,
      },
      userData: (person) => ({ li_fat_id: `fat-${person}` }),
      keysOf: (e) => {
        const ids = (e as { user: { userIds: Array<{ idType: string; idValue: string }> } }).user
          .userIds;
        const fat = ids.find((id) => id.idType === 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID');
        return fat ? { li_fat_id: fat.idValue } : {};
      },
      expectedKeys: (person) => ({ li_fat_id: `fat-${person}` }),
      personOf: eventId,
      keepsEventId: true,
      tagOf: eventId,
      tagsIn: (r) =>
        ((r.json as { elements?: unknown[] } | undefined)?.elements ?? []).map(eventId),
      server,
      poison: poisoner(server, eventId),
      modes: ['expired', 'throttled'],
      close: () => server.close(),
    };
  },
};
