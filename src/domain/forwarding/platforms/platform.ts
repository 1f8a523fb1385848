/**
 * What one ad platform is to Trackway: everything particular to it, in one typed module
 * (`platforms/<type>/index.ts`), listed once in `registry.ts`. The engine, the routes, the
 * stores, the configuration and the dashboard only ever see this shape, so a platform is added
 * by writing its folder and one registry line (docs/platforms.md has the checklist).
 *
 * This file imports nothing that imports the registry: a platform's module may import it.
 */
import { type TObject, Type } from '@sinclair/typebox';
import type { Consent } from '../../consent.ts';
import { type HashedContact, isSha256Hex, type UserData } from '../../events/user-data.ts';
import type { PlatformHashes, PlatformLocation, TrackedEvent } from '../../model.ts';
import type { ActionSource, RawMatchKeys } from '../match-keys.ts';
import type { PlatformAnswer, Verdict } from '../platform-response.ts';

export interface ForwardableEvent {
  event: TrackedEvent;
  /** Contract §11's `action_source` (default `website`), kept with the record. */
  actionSource: ActionSource;
  /** Each platform's hashes, kept with the event, by platform type. */
  hashes: PlatformHashes;
  /**
   * The raw match keys, or null once erased (7 days after the event's timestamp): the event
   * can then still go out, with hashes only.
   */
  matchKeys: RawMatchKeys | null;
  /** The unhashed coarse location some platforms want, by platform type; erased with the keys. */
  location: PlatformLocation | null;
}

export interface PlatformRequest {
  method: 'POST';
  /** Path and query, appended to the platform's base URL (`TRACKWAY_<TYPE>_API_URL`). */
  path: string;
  /** `path` with secrets masked: the only form fit for logs and the attempt ledger. */
  redactedPath: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The events the request carries, in body order (for bisection and the ledger). */
  eventIds: string[];
}

/** An event this destination will not be sent, and why (the outcome's `reason`). */
export interface Skip {
  eventId: string;
  reason: string;
}

/** Something changed on the way out that the ledger should show (GA4's dropped params). */
export interface Note {
  eventId: string;
  note: string;
}

export interface BuiltBatch {
  requests: PlatformRequest[];
  skipped: Skip[];
  notes: Note[];
}

export interface BuildOptions {
  /** Window checks are made against this time. */
  now: Date;
  /** A test send: the platform's test mode (a `test_event_code`, a validation endpoint …). */
  test?: { testEventCode?: string };
}

export type PlatformEventName = { name: string } | { skipped: string };

/** One field of the dashboard's form to add a destination of this type. */
export interface ConfigField {
  name: string;
  label: string;
  secret?: boolean;
  optional?: boolean;
  placeholder: string;
  /** Shown under the field, for a setting whose effect is easy to miss. */
  warning?: string;
  /** Its value is JSON (an object such as `conversion_actions`), not text. */
  json?: boolean;
}

/**
 * A form's fields as a config: a dotted name (`oauth.client_id`) is a field of an object, a
 * `json` field's text is parsed (the field at fault and why when it is not JSON).
 */
export function configOfForm(
  fields: readonly ConfigField[],
  values: Record<string, string>,
): { config: Record<string, unknown> } | { problem: { field: string; message: string } } {
  const config: Record<string, unknown> = {};
  for (const field of fields) {
    const text = values[field.name];
    if (text === undefined) continue;
    let value: unknown = text;
    if (field.json) {
      try {
        value = JSON.parse(text);
      } catch {
        return { problem: { field: field.name, message: 'must be JSON' } };
      }
    }
    const [head, ...rest] = field.name.split('.') as [string, ...string[]];
    if (rest.length === 0) config[head] = value;
    else {
      const inner = (config[head] ?? {}) as Record<string, unknown>;
      inner[rest.join('.')] = value;
      config[head] = inner;
    }
  }
  return { config };
}

/**
 * How a destination's config obtains an OAuth 2.0 access token (RFC 6749 §6's refresh-token
 * grant, or RFC 7523's JWT bearer grant that Google's service accounts use). The engine turns
 * it into a token (delivery/access-tokens.ts) and sends it as `Authorization: Bearer`.
 */
export type TokenGrant =
  | { kind: 'refresh_token'; clientId: string; clientSecret: string; refreshToken: string }
  | {
      kind: 'jwt_bearer';
      /** The service account's email: the JWT's `iss`. */
      issuer: string;
      /** Its PEM private key: the JWT is signed RS256 with it. */
      privateKey: string;
      scope: string;
      /** The JWT's `aud`: the provider's own token URL, whatever URL the token is fetched at. */
      audience: string;
    };

/** A URL setting a module declares (`TRACKWAY_<TYPE>_API_URL`, a token URL): the README's table. */
export interface UrlSetting {
  readonly env: string;
  readonly default: string;
  readonly description: string;
}

export interface PlatformModule {
  /** The destination's `type`. */
  readonly type: string;
  /** Its short name in messages ("Meta"). */
  readonly name: string;
  /** Its name on the dashboard ("Meta (Conversions API)"). */
  readonly label: string;
  readonly config: {
    /** The destination's `config`, with its secrets; validates, types and documents it. */
    readonly schema: TObject;
    /**
     * Write-only fields: masked as `****` + last 4 in every answer; a dotted path names a field
     * of an object (`oauth.refresh_token`).
     */
    readonly secrets: readonly string[];
    /** Fields the platform checks before it takes events: changing one resumes a suspension. */
    readonly credentials: readonly string[];
    /** The dashboard's form, in order. */
    readonly form: readonly ConfigField[];
    /**
     * What the schema cannot say (one of two fields, a key that must parse): the field at
     * fault and why, or null. Checked after the schema, when a destination is saved.
     */
    check?(config: Record<string, unknown>): { field: string; message: string } | null;
  };
  /** The base-URL setting (tests point it at a local stand-in). */
  readonly baseUrl: UrlSetting;
  /**
   * For a platform whose requests carry an OAuth access token the service obtains (Google Ads,
   * LinkedIn): the token URL's setting and the grant a destination's config makes. The engine
   * gets the token before sending, adds it as `Authorization: Bearer`, renews it after a 401
   * and sends once more; a refused grant suspends the destination as a refused token does.
   */
  readonly auth?: {
    readonly tokenUrl: UrlSetting;
    grant(config: Record<string, unknown>): TokenGrant;
  };
  readonly limits: {
    /** Most events one request may carry. */
    readonly eventsPerRequest: number;
    /** Most bytes one request body may have (null: the platform documents none). */
    readonly bytesPerRequest: number | null;
  };
  /** How old an event of this action source may be when sent, in ms (null: no window). */
  windowMs(actionSource: ActionSource): number | null;
  /** Our standard names → the platform's (docs/api.md's table), before `event_names` overrides. */
  readonly defaultNames: Readonly<Record<string, string>>;
  /** The name an event goes out under, or why it cannot go out. */
  eventName(eventName: string, overrides?: Record<string, string>): PlatformEventName;
  /**
   * The platform's own normalisation and hashing of the caller's contact data, at ingestion:
   * `hashes` are kept with the event, `location` (unhashed) with the raw match keys (≤ 7 days).
   */
  userData(
    raw: UserData,
    contact: HashedContact,
  ): { hashes?: Record<string, string>; location?: Record<string, string> };
  /**
   * When the platform's hashes are the record's own user_data (read back from it rather than
   * stored twice): how to read them.
   */
  hashesOfRecord?(userData: Record<string, string> | null): Record<string, string>;
  /** The platform's requests for a batch of events (consent and test mode applied). */
  build(
    events: ForwardableEvent[],
    config: Record<string, unknown>,
    options: BuildOptions,
  ): BuiltBatch;
  /** The platform's answer as accepted / permanent / transient / credentials refused / throttled. */
  classify(answer: PlatformAnswer, now: Date): Verdict;
  /**
   * The part `[start, end)` of a request's events as a request of its own, for a platform that
   * refuses a whole request for one bad event (bisection, batch-isolation.ts); absent when the
   * platform never refuses one event of a request.
   */
  subRequest?(request: PlatformRequest, start: number, end: number): PlatformRequest;
  /**
   * False for a platform without a test mode (Microsoft): the test send builds and checks the
   * request and sends nothing, so a live conversion is never sent as a "test" (contract §18).
   * Absent: `build` applies the platform's own test mode (`options.test`).
   */
  readonly testMode?: boolean;
  /** The keys of a success's receipt that `event.forwarded` carries as `platform_response`. */
  readonly receiptKeys: readonly string[];
  /** What the platform can do with an event's consent (contract §16); `build` maps it. */
  readonly consent: {
    /**
     * The platform takes an `ad_user_data` signal (GA4): a denied event goes out with it and
     * without any user identifier. Without one, a denied event is `skipped`.
     */
    readonly signal: boolean;
    /** The platform has a restricted-processing mode for `limited_data_use` (else `skipped`). */
    readonly limitedDataUse: boolean;
    /** What the event's consent becomes in the payload, in words (`/v1/track/validate`). */
    describe(consent: Consent): string;
  };
}

/** Appends a path (which may hold a query) to a base URL that may itself end in a path. */
export function requestUrl(baseUrl: string, request: Pick<PlatformRequest, 'path'>): string {
  return baseUrl.replace(/\/+$/, '') + request.path;
}

/** Splits a list into consecutive chunks of at most `size`. */
export function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Below this length a secret is masked whole: showing the last four of a short secret would show
 * most of it (all of one of four characters or fewer).
 */
const SHOW_LAST4_FROM = 8;

/** A secret as responses and logs may show it: `****` and its last four characters. */
export function maskSecret(secret: string): string {
  return secret.length < SHOW_LAST4_FROM ? '****' : `****${secret.slice(-4)}`;
}

/**
 * A platform's hashes, each as a one-element list, with the raw IP address and user agent under
 * Meta's names: the `user_data` shape Pinterest and Snapchat share.
 */
export function listedUserData(
  forwardable: ForwardableEvent,
  type: string,
): Record<string, unknown> {
  const user: Record<string, unknown> = {};
  for (const [key, hash] of Object.entries(forwardable.hashes[type] ?? {})) user[key] = [hash];
  const raw = forwardable.matchKeys;
  if (raw?.clientIpAddress !== undefined) user['client_ip_address'] = raw.clientIpAddress;
  if (raw?.clientUserAgent !== undefined) user['client_user_agent'] = raw.clientUserAgent;
  return user;
}

/** A request carrying its events in `data` (Meta, TikTok), cut to `[start, end)`. */
export function dataSubRequest(
  request: PlatformRequest,
  start: number,
  end: number,
): PlatformRequest {
  const data = request.body['data'];
  return {
    ...request,
    body: { ...request.body, data: Array.isArray(data) ? data.slice(start, end) : data },
    eventIds: request.eventIds.slice(start, end),
  };
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/**
 * Why an event older than its platform's window is not sent (the `skipped` reason), or null:
 * "outside Meta's 7-day window: the event is older than 7 days".
 */
export function outsideWindowReason(
  platform: Pick<PlatformModule, 'name' | 'windowMs'>,
  forwardable: Pick<ForwardableEvent, 'event' | 'actionSource'>,
  now: Date,
): string | null {
  const window = platform.windowMs(forwardable.actionSource);
  if (window === null || now.getTime() - forwardable.event.timestamp.getTime() <= window) {
    return null;
  }
  // In days from a week up (Meta's 7 days), in hours below (GA4's 72 hours), as each documents it.
  const inDays = window % DAY_MS === 0 && window >= 7 * DAY_MS;
  const [n, unit] = inDays ? [window / DAY_MS, 'day'] : [window / HOUR_MS, 'hour'];
  return `outside ${platform.name}'s ${n}-${unit} window: the event is older than ${n} ${unit}s`;
}

/** `config.event_names`, which every type takes. */
export const EventNamesSchema = Type.Optional(
  Type.Record(
    Type.String({ minLength: 1, maxLength: 100 }),
    Type.String({ minLength: 1, maxLength: 100 }),
    {
      maxProperties: 100,
      description:
        'Overrides of the default event name mapping: `{"<our name>": "<platform name>"}`.',
    },
  ),
);

/**
 * `config.require_consent`, which every type takes: events without `ad_user_data: "granted"` are
 * then `skipped` for this destination (contract §16).
 */
export const RequireConsentSchema = Type.Optional(
  Type.Boolean({
    description:
      'Forward only events whose `consent.ad_user_data` is `granted`; the others are `skipped`.',
  }),
);

/** `config.test_event_code`, for the platforms whose test mode is a code. */
export const TestEventCodeSchema = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      "The platform's test mode code. For testing only: while it is set, every event goes to the platform's Test events tool and none counts as a live conversion; leave it out for live traffic.",
  }),
);

/**
 * A test event code sends every event to the platform's test tool only (Meta: Events Manager →
 * Test events; TikTok: Test events), where nothing is counted, attributed or optimised on: a
 * destination left with one quietly loses every live conversion.
 */
export const TEST_CODE_WARNING =
  'For testing only: while a test event code is set, every event goes to the platform’s Test events tool and none counts as a live conversion. Leave it empty for live traffic.';

/** The dashboard's field for `config.test_event_code`, with its warning. */
export const TEST_EVENT_CODE_FIELD: ConfigField = {
  name: 'test_event_code',
  label: 'Test event code',
  optional: true,
  placeholder: 'TEST12345',
  warning: TEST_CODE_WARNING,
};

/** Sets `key` only when there is a value: no `undefined` keys to delete afterwards. */
export function put<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

/**
 * The platform's hash of one contact field: a value the caller sent hashed (64 hex) is passed
 * on as it is; otherwise the platform's normal form of the value (from Trackway's own normalised
 * one, or the raw one), hashed once per event (`contact.sha256` remembers).
 */
export function platformHash(
  contact: HashedContact,
  raw: UserData,
  field: keyof UserData,
  normalise: (own: string, raw: string) => string,
): string | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  if (isSha256Hex(value)) return value;
  const text = normalise(contact.normalised[field]!, value);
  return text === '' ? undefined : contact.sha256(text);
}

/**
 * The record's contact hashes under the short keys Meta made common (`em`, `ph`, `fn`, `ln`,
 * `ct`, `st`, `zp`, `country`, `external_id`), for the platforms whose normal forms are
 * Trackway's own and whose keys are these (Pinterest, Snapchat).
 */
export interface ShortKeyHashes {
  em?: string;
  ph?: string;
  fn?: string;
  ln?: string;
  ct?: string;
  st?: string;
  zp?: string;
  country?: string;
  external_id?: string;
}

export function shortKeyHashes(contact: HashedContact): ShortKeyHashes {
  const { hashes } = contact;
  const out: ShortKeyHashes = {};
  put(out, 'em', hashes.email);
  put(out, 'ph', hashes.phone);
  put(out, 'fn', hashes.first_name);
  put(out, 'ln', hashes.last_name);
  put(out, 'ct', hashes.city);
  put(out, 'st', hashes.state);
  put(out, 'zp', hashes.zip);
  put(out, 'country', hashes.country);
  put(out, 'external_id', hashes.external_id);
  return out;
}

/** One event's body, ready to go in a request, with its id (for the ledger and bisection). */
export interface ReadyEvent {
  eventId: string;
  body: Record<string, unknown>;
}

/**
 * The part every builder shares: each event outside the platform's window or whose name cannot
 * go out is skipped with the reason; `toBody` makes the others' bodies under their platform
 * name, or answers a string (why that event is skipped). The ready events come cut into the
 * platform's requests (`limits.eventsPerRequest` each).
 */
export function prepareEvents(
  platform: Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>,
  events: ForwardableEvent[],
  names: Record<string, string> | undefined,
  now: Date,
  toBody: (forwardable: ForwardableEvent, name: string) => Record<string, unknown> | string,
): { parts: ReadyEvent[][]; skipped: Skip[] } {
  const skipped: Skip[] = [];
  const ready: ReadyEvent[] = [];
  for (const forwardable of events) {
    const eventId = forwardable.event.eventId;
    let reason = outsideWindowReason(platform, forwardable, now);
    if (reason === null) {
      const name = platform.eventName(forwardable.event.eventName, names);
      const body = 'skipped' in name ? name.skipped : toBody(forwardable, name.name);
      if (typeof body !== 'string') {
        ready.push({ eventId, body });
        continue;
      }
      reason = body;
    }
    skipped.push({ eventId, reason });
  }
  return { parts: chunk(ready, platform.limits.eventsPerRequest), skipped };
}
