/**
 * Which sites a pixel's browser events may come from, and which cookies an answer sets there.
 * The registrable domain ("eTLD+1") comes from the public suffix list (tldts), never a list of
 * our own: `shop.co.uk` and `user.github.io` are sites, `co.uk` and `github.io` are not.
 */
import { getDomain } from 'tldts';
import { BoundedMemo } from '../bounded-memo.ts';
import type { Pixel } from '../model.ts';

// Every browser event parses its Origin (a URL parse, ~5 µs, twice: before the body is read and
// after) and looks up two registrable domains (the public suffix list, ~3 µs each), yet a
// pixel's events come from a handful of origins and hosts: remembered, they cost a lookup.
const originHostnames = new BoundedMemo(parseOriginHostname);
const registrableDomains = new BoundedMemo((hostname) =>
  getDomain(hostname, { allowPrivateDomains: true }),
);

/** The hostname of an `Origin` header (lower-case, any port), or null when it names none. */
export function originHostname(origin: string | undefined): string | null {
  if (!origin || origin === 'null') return null;
  return originHostnames.get(origin);
}

function parseOriginHostname(origin: string): string | null {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    return url.hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** The pixel's `domain`, a subdomain of it, or its `tracking_domain`. */
export function isPixelSite(pixel: Pick<Pixel, 'domain' | 'trackingDomain'>, hostname: string) {
  return (
    hostname === pixel.domain ||
    hostname.endsWith(`.${pixel.domain}`) ||
    hostname === pixel.trackingDomain
  );
}

/** `track.shop.example.co.uk` → `example.co.uk`; null for an IP address or a bare suffix. */
export function registrableDomain(hostname: string): string | null {
  return registrableDomains.get(hostname);
}

/**
 * The domain first-party cookies are set on: the pixel domain's registrable domain, when the
 * request came to a host under it (a path proxy on the shop's site, or its tracking domain).
 * Served from anywhere else, a cookie would be third-party: none is set.
 */
export function firstPartyCookieDomain(
  pixel: Pick<Pixel, 'domain'>,
  requestHostname: string,
): string | null {
  const site = registrableDomain(pixel.domain);
  if (site === null) return null;
  return registrableDomain(requestHostname.toLowerCase()) === site ? site : null;
}

const DAY_SECONDS = 86_400;
/** Browsers cap a cookie's life at 400 days (RFC 6265bis); the visitor id lives that long. */
export const VISITOR_COOKIE_DAYS = 400;
/** Meta's own pixel gives `_fbp` and `_fbc` 90 days. */
export const META_COOKIE_DAYS = 90;

/** RFC 6265's cookie-octet: anything else could end the header or start another attribute. */
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]{1,1024}$/;

/** One `Set-Cookie` value, readable by the page's script (not HttpOnly: the snippet reads it). */
export function setCookie(
  name: string,
  value: string,
  options: { domain: string; days: number; secure: boolean },
): string | null {
  if (!COOKIE_VALUE.test(value)) return null;
  const secure = options.secure ? '; Secure' : '';
  return `${name}=${value}; Domain=${options.domain}; Path=/; Max-Age=${options.days * DAY_SECONDS}${secure}; SameSite=Lax`;
}

/** The `Cookie` header as name → value (the first of a repeated name wins, as browsers send). */
export function parseCookieHeader(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name === '' || Object.hasOwn(cookies, name) || name === '__proto__') continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      value = value.slice(1, -1);
    cookies[name] = value;
  }
  return cookies;
}
