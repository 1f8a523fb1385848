/**
 * Each platform's stand-in server, by destination type: what the benchmarks (and any suite that
 * runs over every platform) start to forward to. Adding a platform adds its stand-in here.
 */
import { PLATFORMS, type Platform } from '../../src/domain/forwarding/platforms/registry.ts';
import { startGa4Server } from './ga4-server.ts';
import { startGoogleAdsServer } from './google-ads-server.ts';
import type { PlatformServer, ReceivedRequest } from './http-server.ts';
import { startLinkedinServer } from './linkedin-server.ts';
import { startMetaServer } from './meta-server.ts';
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
  /** What a website event needs in `user_data` for this platform, beyond email, IP and UA. */
  userData(person: string): Record<string, string>;
  /** The bench's name of a person, read back from an accepted event. */
  personOf(event: unknown): string;
  /** Whether the platform keeps our event id (else events are told apart by the person). */
  keepsEventId: boolean;
  /**
   * The switches the fault suites turn (test/forwarding-stand-ins.faults.test.ts), for the
   * stand-ins that have them.
   */
  faults?: StandInFaults;
  close(): Promise<void>;
}

export interface StandInFaults {
  /** The server: its mode (`down`, `hang`, `throttled`), held and hanging requests. */
  server: Pick<
    PlatformServer,
    'holdIf' | 'held' | 'inFlight' | 'release' | 'requests' | 'waitFor'
  > & {
    mode: string;
    hangIf?: PlatformServer['hangIf'];
  };
  /** The event ids a request to it carried. */
  idsIn(request: ReceivedRequest): string[];
  /** Refuse this event as the platform refuses an invalid one (null: none). */
  poison(eventId: string | null): void;
  /** Refuse the credentials (a revoked grant or token) until turned off. */
  refuseCredentials(on: boolean): void;
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

export const STAND_INS: Record<Platform, () => Promise<StandIn>> = {
  meta: async () => {
    const server = await startMetaServer();
    return {
      baseUrl: server.url,
      events: server.events as unknown[],
      duplicates: () => server.duplicates,
      config: { pixel_id: server.pixelId, access_token: server.accessToken },
      userData: () => ({}),
      personOf: byEventId,
      keepsEventId: true,
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
      // GA4 keeps no event id: the bench's client id is `<person>.1700000000`.
      personOf: (e) => String((e as { client_id: string }).client_id).split('.')[0]!,
      keepsEventId: false,
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
      personOf: byEventId,
      keepsEventId: true,
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
      userData: () => ({}),
      personOf: byEventId,
      keepsEventId: true,
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
      userData: () => ({}),
      personOf: byEventId,
      keepsEventId: true,
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
      userData: () => ({}),
      // Reddit keeps our event id as the conversion id.
      personOf: (e) =>
        String((e as { metadata: { conversion_id: string } }).metadata.conversion_id),
      keepsEventId: true,
      close: () => server.close(),
    };
  },
  google_ads: async () => {
    const server = await startGoogleAdsServer();
    const [purchase, lead, view] = [...server.conversionActions];
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
      userData: () => ({}),
      // Google keeps our event id as the transaction id.
      personOf: (e) => String((e as { transactionId: string }).transactionId),
      keepsEventId: true,
      faults: {
        server,
        idsIn: (r) =>
          (
            (r.json as { events?: Array<{ transactionId?: string }> } | undefined)?.events ?? []
          ).map((e) => String(e.transactionId)),
        poison(eventId) {
          if (eventId === null) delete server.rejectEvent;
          else
            server.rejectEvent = (e) => (e['transactionId'] === eventId ? 'poisoned' : undefined);
        },
        refuseCredentials(on) {
          server.refuseGrants = on;
          if (on) server.expireTokens();
        },
      },
      close: () => server.close(),
    };
  },
  linkedin: async () => {
    const server = await startLinkedinServer();
    const [purchase, lead, view] = [...server.rules];
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
      userData: () => ({}),
      personOf: (e) => String((e as { eventId: string }).eventId),
      keepsEventId: true,
      faults: {
        server,
        idsIn: (r) =>
          ((r.json as { elements?: Array<{ eventId?: string }> } | undefined)?.elements ?? []).map(
            (e) => String(e.eventId),
          ),
        poison(eventId) {
          if (eventId === null) delete server.rejectEvent;
          else server.rejectEvent = (e) => (e['eventId'] === eventId ? 'poisoned' : undefined);
        },
        refuseCredentials(on) {
          server.refuseGrants = on;
          if (on) server.expireTokens();
        },
      },
      close: () => server.close(),
    };
  },
};
