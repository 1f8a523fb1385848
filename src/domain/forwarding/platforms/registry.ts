/**
 * The ad platforms Trackway forwards to: one line each. Every list of platforms, the
 * destination `type` union, the config schemas (and the OpenAPI `oneOf`), the base-URL settings
 * and the dashboard's forms are derived from this object.
 */
import { Type } from '@sinclair/typebox';
import { ga4 } from './ga4/index.ts';
import { googleAds } from './google_ads/index.ts';
import { linkedin } from './linkedin/index.ts';
import { meta } from './meta/index.ts';
import { microsoftAds } from './microsoft_ads/index.ts';
import { pinterest } from './pinterest/index.ts';
import type { PlatformModule } from './platform.ts';
import { reddit } from './reddit/index.ts';
import { snapchat } from './snapchat/index.ts';
import { tiktok } from './tiktok/index.ts';

export const PLATFORM_MODULES = {
  meta,
  ga4,
  tiktok,
  pinterest,
  snapchat,
  reddit,
  microsoft_ads: microsoftAds,
  google_ads: googleAds,
  linkedin,
} as const satisfies Record<string, PlatformModule>;

export type Platform = keyof typeof PLATFORM_MODULES;
export const PLATFORMS = Object.keys(PLATFORM_MODULES) as Platform[];

/** The module of a destination's type. */
export function platformModule(type: Platform): PlatformModule {
  return PLATFORM_MODULES[type];
}

export function isPlatform(type: string): type is Platform {
  return Object.hasOwn(PLATFORM_MODULES, type);
}

/** A destination's `type` (and an event's forwarding `platform`), as schemas declare it. */
export const PlatformSchema = Type.Union(
  PLATFORMS.map((type) => Type.Literal(type)),
  { description: 'The platform (a destination `type`).' },
);
