/**
 * Match keys (contract §11): the optional `action_source` and the `user_data` keys ad platforms
 * match on and want unhashed (Meta: never hash client_ip_address, client_user_agent, fbc, fbp).
 *
 * How they plug into `POST /v1/track` (a later step, not wired here): spread
 * `MATCH_KEY_USER_DATA_PROPERTIES` into `UserDataSchema`'s properties and add
 * `action_source: ActionSourceSchema` to `TrackEventSchema`; the route's validator then checks
 * them with the same messages as every other field (the `ip-address` format is registered on
 * import of this module). The verb takes them out of `user_data` with `splitMatchKeys()`
 * before `hashUserData()` sees it: the raw keys go to the 7-day store, their SHA-256 to the
 * record (`matchKeyHashes()`).
 */
import { FormatRegistry, type Static, Type } from '@sinclair/typebox';
import { sha256Hex } from '../events/user-data.ts';
import { compileValidator } from '../validation.ts';

export const ACTION_SOURCES = [
  'website',
  'app',
  'email',
  'phone_call',
  'chat',
  'physical_store',
  'system_generated',
  'other',
] as const;
export type ActionSource = (typeof ACTION_SOURCES)[number];
export const DEFAULT_ACTION_SOURCE: ActionSource = 'website';

export const MATCH_KEY_FIELDS = [
  'client_ip_address',
  'client_user_agent',
  'fbc',
  'fbp',
  'ttclid',
  'ttp',
  'ga_client_id',
  'ga_session_id',
  // Contract §18: each further platform's click id and cookie, under the names the platforms
  // give them (the cookies with their leading underscore).
  'gclid',
  'gbraid',
  'wbraid',
  'epik',
  'ScCid',
  '_scid',
  'rdt_cid',
  '_rdt_uuid',
  'msclkid',
  '_uetvid',
  'li_fat_id',
] as const;
export type MatchKeyField = (typeof MATCH_KEY_FIELDS)[number];

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_CHARACTERS = /^[0-9a-f:.]+$/i;

/**
 * IPv4 in dotted-quad form (no leading zeros, which some parsers read as octal) or IPv6 (also
 * with an embedded IPv4 tail). IPv6 is checked by the WHATWG URL parser, which implements the
 * full grammar; the character check first keeps anything but an address out of the URL.
 */
export function isIpAddress(value: string): boolean {
  if (IPV4.test(value)) return true;
  if (!value.includes(':') || !IPV6_CHARACTERS.test(value)) return false;
  try {
    new URL(`http://[${value}]/`);
    return true;
  } catch {
    return false;
  }
}

FormatRegistry.Set('ip-address', isIpAddress);

/**
 * Meta's cookie formats: `fb.<subdomain index>.<creation time in ms>.<fbclid or random>`. The
 * last part is kept exactly as sent (Meta: the fbclid is case-sensitive and must not be
 * modified) and may itself hold dots (the parameter builder library appends a suffix).
 */
const FBC = '^fb\\.\\d+\\.\\d+\\.\\S+$';
const FBP = '^fb\\.\\d+\\.\\d+\\.\\S+$';

/**
 * A click id or a platform cookie (§18): an opaque token the platform made, kept and sent
 * exactly as received. Only its shape is checked — no spaces or controls, a platform's length —
 * since none of the platforms documents a format beyond that.
 */
const clickIdentifier = (description: string) =>
  Type.Optional(
    Type.String({
      pattern: '^[\\x21-\\x7e]+$',
      maxLength: 512,
      errorMessage: 'must be the value as the platform set it (printable, no spaces)',
      description,
    }),
  );

export const MATCH_KEY_USER_DATA_PROPERTIES = {
  client_ip_address: Type.Optional(
    Type.String({
      format: 'ip-address',
      maxLength: 64,
      errorMessage: 'must be an IPv4 or IPv6 address',
      description:
        "The end user's IP address. Sent unhashed to the platforms; hashed in the record.",
    }),
  ),
  client_user_agent: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 512,
      description: "The end user's browser user agent. Sent unhashed; hashed in the record.",
    }),
  ),
  fbc: Type.Optional(
    Type.String({
      pattern: FBC,
      maxLength: 512,
      errorMessage: 'must be a Meta click id cookie: fb.<n>.<ms>.<fbclid>',
      description: 'Meta click id cookie (`_fbc`), kept exactly as sent.',
    }),
  ),
  fbp: Type.Optional(
    Type.String({
      pattern: FBP,
      maxLength: 512,
      errorMessage: 'must be a Meta browser id cookie: fb.<n>.<ms>.<random>',
      description: 'Meta browser id cookie (`_fbp`).',
    }),
  ),
  ttclid: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'TikTok click id.' }),
  ),
  ttp: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'TikTok cookie (`_ttp`).' }),
  ),
  ga_client_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        "GA4 `client_id`: the `_ga` cookie's id (`<random>.<seconds>`; a whole cookie value `GA1.1.<random>.<seconds>` is reduced to it). Required to forward to GA4.",
    }),
  ),
  ga_session_id: Type.Optional(
    Type.String({
      pattern: '^\\d{1,20}$',
      errorMessage: 'must be the session number (digits) from the _ga_<container> cookie',
      description:
        'GA4 session id: the session number from the `_ga_<container>` cookie. Sent as `session_id` (with `engagement_time_msec`), so GA4 attributes the event to the visit.',
    }),
  ),
  gclid: clickIdentifier(
    "Google Ads click id (the landing URL's `gclid`, or the `_gcl_aw` cookie's last part).",
  ),
  gbraid: clickIdentifier('Google Ads click id for iOS app-to-web measurement (`gbraid`).'),
  wbraid: clickIdentifier('Google Ads click id for iOS web-to-app measurement (`wbraid`).'),
  epik: clickIdentifier("Pinterest click id (the landing URL's `epik`, or the `_epik` cookie)."),
  ScCid: clickIdentifier("Snapchat click id (the landing URL's `ScCid`)."),
  _scid: clickIdentifier('Snapchat browser id cookie (`_scid`).'),
  rdt_cid: clickIdentifier("Reddit click id (the landing URL's `rdt_cid`)."),
  _rdt_uuid: clickIdentifier('Reddit browser id cookie (`_rdt_uuid`).'),
  msclkid: clickIdentifier(
    "Microsoft Advertising click id (the landing URL's `msclkid`, or the `_uetmsclkid` cookie without its `_uet` prefix).",
  ),
  _uetvid: clickIdentifier('Microsoft UET visitor id cookie (`_uetvid`).'),
  li_fat_id: clickIdentifier(
    "LinkedIn first-party ad tracking id (the landing URL's or cookie's `li_fat_id`).",
  ),
};

export const ActionSourceSchema = Type.Optional(
  Type.Union(
    ACTION_SOURCES.map((source) => Type.Literal(source)),
    { description: "Where the conversion happened (Meta's values). Default `website`." },
  ),
);

/** The match keys alone, for validating them apart from the rest of a track body. */
export const MatchKeysSchema = Type.Object(
  {
    action_source: ActionSourceSchema,
    user_data: Type.Optional(
      Type.Object(MATCH_KEY_USER_DATA_PROPERTIES, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type MatchKeysInput = Static<typeof MatchKeysSchema>;

/**
 * How long after the event's `timestamp` its raw match keys are kept (§11): the longest window
 * a supported platform accepts an event in (Meta, 7 days). After that nothing could use them.
 */
export const RAW_MATCH_KEYS_TTL_MS = 7 * 86_400_000;

/** The raw match keys of one event: kept apart from its record, at most 7 days (§11). */
export interface RawMatchKeys {
  clientIpAddress?: string;
  clientUserAgent?: string;
  fbc?: string;
  fbp?: string;
  ttclid?: string;
  ttp?: string;
  gaClientId?: string;
  gaSessionId?: string;
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  epik?: string;
  scCid?: string;
  scid?: string;
  rdtCid?: string;
  rdtUuid?: string;
  msclkid?: string;
  uetvid?: string;
  liFatId?: string;
}

/** Each match key's name in `RawMatchKeys`. */
export const RAW_MATCH_KEY_NAME: Record<MatchKeyField, keyof RawMatchKeys> = {
  client_ip_address: 'clientIpAddress',
  client_user_agent: 'clientUserAgent',
  fbc: 'fbc',
  fbp: 'fbp',
  ttclid: 'ttclid',
  ttp: 'ttp',
  ga_client_id: 'gaClientId',
  ga_session_id: 'gaSessionId',
  gclid: 'gclid',
  gbraid: 'gbraid',
  wbraid: 'wbraid',
  epik: 'epik',
  ScCid: 'scCid',
  _scid: 'scid',
  rdt_cid: 'rdtCid',
  _rdt_uuid: 'rdtUuid',
  msclkid: 'msclkid',
  _uetvid: 'uetvid',
  li_fat_id: 'liFatId',
};

/**
 * Separates a validated `user_data` into its match keys and the rest (the contact data that
 * `hashUserData()` normalises and hashes). Nothing is dropped: every key lands on one side.
 * `action_source` is not a secret: it stays with the record, not with the 7-day keys.
 */
export function splitMatchKeys(
  userData: Record<string, string> | undefined,
  actionSource: ActionSource | undefined,
): { actionSource: ActionSource; matchKeys: RawMatchKeys; contact: Record<string, string> } {
  const matchKeys: RawMatchKeys = {};
  const contact: Record<string, string> = {};
  for (const [key, value] of Object.entries(userData ?? {})) {
    const camel = RAW_MATCH_KEY_NAME[key as MatchKeyField];
    if (camel) matchKeys[camel] = value;
    else contact[key] = value;
  }
  return { actionSource: actionSource ?? DEFAULT_ACTION_SOURCE, matchKeys, contact };
}

/**
 * What the stored record shows of the match keys: each one's SHA-256 under its own name, so a
 * record never holds an IP or a user agent (§11). The values are hashed as sent (no
 * normalisation: they are identifiers, not contact data).
 */
export function matchKeyHashes(matchKeys: RawMatchKeys): Partial<Record<MatchKeyField, string>> {
  const hashes: Partial<Record<MatchKeyField, string>> = {};
  for (const field of MATCH_KEY_FIELDS) {
    const value = matchKeys[RAW_MATCH_KEY_NAME[field]];
    if (value !== undefined) hashes[field] = sha256Hex(value);
  }
  return hashes;
}

/** Checks match keys on their own, with the track route's messages (`Invalid field: …`). */
export const validateMatchKeys = compileValidator(MatchKeysSchema);
