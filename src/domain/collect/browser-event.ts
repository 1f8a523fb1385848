/**
 * A browser's hit on `POST /v1/collect`, turned into the body `/v1/track` takes, so that it is
 * validated, hashed, deduplicated, committed and forwarded by exactly the server path
 * (prepareEvent, insertEvent). Pure: the route hands in what only HTTP knows (the connection's
 * IP, the User-Agent header, the Cookie header, the time).
 */
import {
  isIpAddress,
  MATCH_KEY_FIELDS,
  RAW_MATCH_KEY_NAME,
  type RawMatchKeys,
} from '../forwarding/match-keys.ts';
import type { VisitorKeys } from '../model.ts';
import { compileValidator } from '../validation.ts';
import {
  CLICK_ID_PARAMS,
  type CollectInput,
  CollectSchema,
  GA_CONTAINER_COOKIE,
  MAX_IDENTIFIER_LENGTH,
  PLATFORM_COOKIES,
} from './schemas.ts';

const TOP_LEVEL = new Set(Object.keys(CollectSchema.properties));
const CLICK_IDS = new Set<string>(CLICK_ID_PARAMS);
const COOKIES = new Set<string>(PLATFORM_COOKIES);
const CONSENT_KEYS = new Set(['ad_user_data', 'ad_personalization', 'limited_data_use']);

const validateCollect = compileValidator(CollectSchema);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keeps `keep`'s keys of `object` (and only string values when `strings`); counts the rest. */
function pick(
  object: Record<string, unknown>,
  keep: (key: string) => boolean,
  strings: boolean,
): { kept: Record<string, unknown>; dropped: number } {
  const kept: Record<string, unknown> = {};
  let dropped = 0;
  // for…in rather than Object.entries: no pair array per field on every browser event.
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const value = object[key];
    const usable =
      !strings ||
      (typeof value === 'string' && value !== '' && value.length <= MAX_IDENTIFIER_LENGTH);
    if (keep(key) && usable) kept[key] = value;
    else dropped++;
  }
  return { kept, dropped };
}

/**
 * The body with what this version does not know taken out, then validated. Browsers run old
 * (or foreign) snippets for years, so an unknown field is dropped and counted, never refused;
 * so are click ids and cookies that are not a platform's, or not usable strings (a page's
 * cookie jar is not ours to validate). A known field of the wrong type is still a 400.
 */
export function readCollectBody(body: unknown): { input: CollectInput; dropped: number } {
  if (!isObject(body)) return { input: validateCollect(body) as CollectInput, dropped: 0 };
  const top = pick(body, (k) => TOP_LEVEL.has(k), false);
  let dropped = top.dropped;
  const out = top.kept;
  if (isObject(out['ids'])) {
    const ids = pick(out['ids'], (k) => CLICK_IDS.has(k), true);
    out['ids'] = ids.kept;
    dropped += ids.dropped;
  }
  if (isObject(out['cookies'])) {
    const cookies = pick(
      out['cookies'],
      (k) => COOKIES.has(k) || GA_CONTAINER_COOKIE.test(k),
      true,
    );
    out['cookies'] = cookies.kept;
    dropped += cookies.dropped;
  }
  if (isObject(out['consent'])) {
    const consent = pick(out['consent'], (k) => CONSENT_KEYS.has(k), false);
    out['consent'] = consent.kept;
    dropped += consent.dropped;
  }
  return { input: validateCollect(out) as CollectInput, dropped };
}

/** What only the HTTP layer knows about the visitor. */
export interface BrowserFacts {
  /** The connection's address (TRACKWAY_TRUST_PROXY's rule), never a value from the body. */
  ip: string;
  userAgent: string | undefined;
  /** The request's `Cookie` header, parsed (first-party: the tracking domain's cookies). */
  cookieHeader: Readonly<Record<string, string>>;
  now: Date;
  /**
   * Whether the answer can set first-party cookies (sites.ts). Only then is a missing `_fbp`
   * made here: made on every hit without being kept, it would name a new browser each time.
   */
  firstParty: boolean;
}

/** Meta's cookie formats (`fb.<subdomain index>.<ms>.<fbclid or random>`). */
const META_COOKIE = /^fb\.\d+\.\d+\.\S+$/;
/** GA's `_ga` cookie, `GA1.<n>.<random>.<seconds>`: its client id is the last two parts. */
const GA_COOKIE = /^GA\d\.\d+\.(\d+\.\d+)$/;
const MAX_USER_AGENT = 512;
const MAX_TIKTOK = 256;

/** `fbc` for a click id, as Meta's pixel and parameter builder write it. */
export function fbcFor(fbclid: string, now: Date): string {
  return `fb.1.${now.getTime()}.${fbclid}`;
}

/** A new `_fbp` browser id: `fb.1.<ms>.<random number>`, as Meta's pixel makes one. */
export function newFbp(now: Date): string {
  const random = String(Math.floor(Math.random() * 9e9) + 1e9);
  return `fb.1.${now.getTime()}.${random}`;
}

/** The fbclid an `_fbc` value was made from (everything after its third dot). */
function fbclidOf(fbc: string): string {
  return fbc.split('.').slice(3).join('.');
}

/** A browser hit, as the server path takes it, and what it adds to the visitor. */
export interface BrowserEvent {
  /** The `/v1/track` body: prepareEvent validates and hashes it like any server event. */
  track: Record<string, unknown>;
  /** Null when consent is denied: nothing of the visitor is kept. */
  visitor: VisitorKeys | null;
  /** The Meta cookies the answer should set: made here because the visitor had none. */
  madeFbp: string | null;
  madeFbc: string | null;
  /** `_fbc` or `_fbp` the visitor already had (body or Cookie header). */
  hadFbp: boolean;
}

/**
 * Builds the track body of a browser hit. The IP and user agent come from the connection and
 * its header, never from the body. Under `ad_user_data: "denied"` the event is kept without
 * any identifier (no IP, user agent, click id or cookie), and nothing of the visitor is kept.
 */
export function browserEvent(
  pixelId: string,
  input: CollectInput,
  facts: BrowserFacts,
): BrowserEvent {
  const track: Record<string, unknown> = {
    pixel_id: pixelId,
    event_name: input.event_name,
    url: input.url,
    action_source: 'website',
  };
  if (input.event_id !== undefined) track['event_id'] = input.event_id;
  if (input.referrer !== undefined && /^https?:\/\//i.test(input.referrer)) {
    track['referrer'] = input.referrer;
  }
  if (input.title !== undefined) track['title'] = input.title;
  if (input.value !== undefined) track['value'] = input.value;
  if (input.currency !== undefined) track['currency'] = input.currency;
  if (input.custom_data !== undefined) track['custom_data'] = input.custom_data;
  // Stored with the record and applied per destination, as for a server event (contract §16).
  if (input.consent !== undefined) track['consent'] = input.consent;
  if (input.consent?.ad_user_data === 'denied') {
    return { track, visitor: null, madeFbp: null, madeFbc: null, hadFbp: false };
  }
  const cookies: Record<string, string> = { ...(input.cookies ?? {}) };
  // The Cookie header fills what the body lacks: when served first-party, the tracking
  // domain's own cookies arrive with the request even if script could not read them.
  for (const name of PLATFORM_COOKIES) {
    const value = facts.cookieHeader[name];
    if (cookies[name] === undefined && value && value.length <= MAX_IDENTIFIER_LENGTH) {
      cookies[name] = value;
    }
  }
  // The visitor id is the body's anonymous_id, not a match key (only a caller handing in its
  // own cookies could put it here: the body's are filtered to the platforms').
  if (Object.hasOwn(cookies, '_tw_id')) delete cookies['_tw_id'];
  const ids = { ...(input.ids ?? {}) } as Record<string, string>;

  const keys: RawMatchKeys = {};
  if (isIpAddress(facts.ip)) keys.clientIpAddress = facts.ip;
  if (facts.userAgent && facts.userAgent.length <= MAX_USER_AGENT) {
    keys.clientUserAgent = facts.userAgent;
  }
  // A new fbclid replaces an older _fbc, as Meta's own pixel does.
  let madeFbc: string | null = null;
  const existingFbc = cookies['_fbc'] !== undefined && META_COOKIE.test(cookies['_fbc']);
  if (ids['fbclid'] && !/\s/.test(ids['fbclid'])) {
    if (existingFbc && fbclidOf(cookies['_fbc']!) === ids['fbclid']) keys.fbc = cookies['_fbc'];
    else keys.fbc = madeFbc = fbcFor(ids['fbclid'], facts.now);
  } else if (existingFbc) {
    keys.fbc = cookies['_fbc'];
  }
  const hadFbp = cookies['_fbp'] !== undefined && META_COOKIE.test(cookies['_fbp']);
  let madeFbp: string | null = null;
  if (hadFbp) keys.fbp = cookies['_fbp'];
  else if (facts.firstParty) keys.fbp = madeFbp = newFbp(facts.now);
  if (ids['ttclid'] && ids['ttclid'].length <= MAX_TIKTOK) keys.ttclid = ids['ttclid'];
  if (cookies['_ttp'] && cookies['_ttp'].length <= MAX_TIKTOK) keys.ttp = cookies['_ttp'];
  const ga = cookies['_ga'] === undefined ? null : GA_COOKIE.exec(cookies['_ga']);
  if (ga) keys.gaClientId = ga[1];
  const gaSession = gaSessionIdOf(cookies);
  if (gaSession !== undefined) keys.gaSessionId = gaSession;
  Object.assign(keys, clickKeysOf(ids, cookies));
  if (madeFbc) cookies['_fbc'] = madeFbc;
  if (madeFbp) cookies['_fbp'] = madeFbp;

  track['user_data'] = userDataOf(keys);
  return { track, visitor: { matchKeys: keys, ids, cookies }, madeFbp, madeFbc, hadFbp };
}

/** The match keys under their `user_data` names. */
export function userDataOf(keys: RawMatchKeys): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of MATCH_KEY_FIELDS) {
    const value = keys[RAW_MATCH_KEY_NAME[field]];
    if (value) out[field] = value;
  }
  return out;
}

/** A click id or cookie value fit to be a match key: printable, no spaces (match-keys.ts). */
const TOKEN = /^[\x21-\x7e]{1,512}$/;

/**
 * The further platforms' click ids and cookies (contract §18): the landing URL's click id wins
 * over the cookie the platform's own tag keeps it in, as a newer click does in their tags.
 */
export function clickKeysOf(
  ids: Record<string, string>,
  cookies: Record<string, string>,
): RawMatchKeys {
  const keys: RawMatchKeys = {};
  const take = (name: keyof RawMatchKeys, ...candidates: Array<string | undefined>) => {
    const value = candidates.find((candidate) => candidate !== undefined && TOKEN.test(candidate));
    if (value !== undefined) keys[name] = value;
  };
  // `_gcl_aw` is `GCL.<seconds>.<gclid>`; `_uetmsclkid` is `_uet<msclkid>` (platforms.md §6).
  take('gclid', ids['gclid'], /^GCL\.\d+\.(.+)$/.exec(cookies['_gcl_aw'] ?? '')?.[1]);
  take('gbraid', ids['gbraid']);
  take('wbraid', ids['wbraid']);
  take('epik', ids['epik'], cookies['_epik']);
  take('scCid', ids['ScCid']);
  take('scid', cookies['_scid']);
  take('rdtCid', ids['rdt_cid']);
  take('rdtUuid', cookies['_rdt_uuid']);
  take('msclkid', ids['msclkid'], /^_uet(.+)$/.exec(cookies['_uetmsclkid'] ?? '')?.[1]);
  take('uetvid', cookies['_uetvid']);
  take('liFatId', ids['li_fat_id'], cookies['li_fat_id']);
  return keys;
}

/**
 * GA4's session id from the `_ga_<container>` cookie (`GS1.1.<session id>.…`, or the newer
 * `GS2.1.s<session id>$o…`), when the page has exactly one: with several the event cannot say
 * which GA4 property it belongs to.
 */
export function gaSessionIdOf(cookies: Record<string, string>): string | undefined {
  const containers = Object.keys(cookies).filter((name) => GA_CONTAINER_COOKIE.test(name));
  if (containers.length !== 1) return undefined;
  const value = cookies[containers[0]!] ?? '';
  const match =
    /^GS1\.\d+\.(\d{1,20})\./.exec(value) ?? /^GS2\.\d+\.s(\d{1,20})(?:\$|$)/.exec(value);
  return match?.[1];
}
