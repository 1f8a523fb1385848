import { PLANS } from '../accounts/plans.ts';
import type { Context } from '../context.ts';
import { invalidField, pixelNotFound, TrackwayError } from '../errors.ts';
import { pageOf } from '../events/list-events.ts';
import { newId, newPublishableKey } from '../ids.ts';
import type { Pixel, WebhookEvent } from '../model.ts';
import type {
  CreatePixelInput,
  PageQuery,
  PixelDetail,
  PixelObject,
  UpdatePixelInput,
} from './schemas.ts';

export function pixelObject(pixel: Pixel): PixelObject {
  return {
    id: pixel.id,
    name: pixel.name,
    domain: pixel.domain,
    tracking_domain: pixel.trackingDomain,
    status: pixel.status,
    publishable_key: pixel.publishableKey,
    created_at: pixel.createdAt.toISOString(),
  };
}

/** A display name without its surrounding spaces; one of spaces only is no name. */
function displayName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw invalidField('name', 'must not be blank');
  return name;
}

export async function createPixel({
  ctx,
  input,
}: {
  ctx: Context;
  input: CreatePixelInput;
}): Promise<PixelObject> {
  const now = ctx.clock.now();
  const domain = input.domain.toLowerCase();
  const pixel: Pixel = {
    id: newId('px'),
    accountId: ctx.account.id,
    name: displayName(input.name),
    domain,
    trackingDomain: input.tracking_domain?.toLowerCase() ?? domain,
    publishableKey: newPublishableKey(),
    previousPublishableKey: null,
    previousKeyExpiresAt: null,
    status: 'active',
    createdAt: now,
    updatedAt: now,
  };
  const { plan } = ctx.account;
  const quota = PLANS[plan].pixelQuota;
  const emit: WebhookEvent[] = [
    {
      accountId: pixel.accountId,
      type: 'pixel.created',
      occurredAt: now,
      data: pixelObject(pixel),
    },
  ];
  const outcome = await ctx.store.pixels.createPixel(pixel, quota, emit);
  if (outcome === 'quota_exceeded') {
    throw new TrackwayError(
      'forbidden',
      `Subscription limit exceeded: plan ${plan} allows ${quota} pixel${quota === 1 ? '' : 's'}`,
    );
  }
  return pixelObject(pixel);
}

const HOUR_MS = 3_600_000;
const WEEK_MS = 7 * 24 * HOUR_MS;

export async function getPixel({
  ctx,
  pixelId,
}: {
  ctx: Context;
  pixelId: string;
}): Promise<PixelDetail> {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  // From the hourly rollup (a few hundred rows at most), never the events: by whole hours, the
  // one starting at or before now − 7 days included.
  const fromHour = Math.floor((ctx.clock.now().getTime() - WEEK_MS) / HOUR_MS);
  const average = await ctx.store.matchKeys.averageMatchQuality(ctx.account.id, pixelId, fromHour);
  return { ...pixelObject(pixel), match_quality_7d: average };
}

export async function listPixels({ ctx, query }: { ctx: Context; query: PageQuery }) {
  const page = pageOf(query);
  const { pixels, total } = await ctx.store.pixels.listPixels(ctx.account.id, page);
  return { pixels: pixels.map(pixelObject), total, ...page };
}

const API_TO_FIELD = {
  name: 'name',
  domain: 'domain',
  tracking_domain: 'trackingDomain',
  status: 'status',
} as const;

/**
 * Applies the fields sent. `pixel.updated` carries the pixel and `previous_attributes` (the old
 * values of the fields that really changed); a PATCH that changes nothing emits nothing.
 */
export async function updatePixel({
  ctx,
  pixelId,
  input,
}: {
  ctx: Context;
  pixelId: string;
  input: UpdatePixelInput;
}): Promise<PixelObject> {
  const now = ctx.clock.now();
  const normalised: UpdatePixelInput = {
    ...input,
    ...(input.name !== undefined && { name: displayName(input.name) }),
    ...(input.domain !== undefined && { domain: input.domain.toLowerCase() }),
    ...(input.tracking_domain !== undefined && {
      tracking_domain: input.tracking_domain.toLowerCase(),
    }),
  };
  const result = await ctx.store.pixels.updatePixel(ctx.account.id, pixelId, (current) => {
    const next: Pixel = { ...current };
    const previous: Record<string, unknown> = {};
    for (const [apiName, field] of Object.entries(API_TO_FIELD) as Array<
      [keyof UpdatePixelInput, (typeof API_TO_FIELD)[keyof typeof API_TO_FIELD]]
    >) {
      const value = normalised[apiName];
      if (value === undefined || value === current[field]) continue;
      previous[apiName] = current[field];
      (next as unknown as Record<string, unknown>)[field] = value;
    }
    if (Object.keys(previous).length === 0) return null;
    next.updatedAt = now;
    const data = { ...pixelObject(next), previous_attributes: previous };
    return {
      next,
      emit: [{ accountId: next.accountId, type: 'pixel.updated', occurredAt: now, data }],
    };
  });
  if (!result) throw pixelNotFound(pixelId);
  return pixelObject(result.after);
}

/** How long a rotated-out publishable key keeps working: pages cached with it keep sending. */
export const PUBLISHABLE_KEY_OVERLAP_MS = 24 * HOUR_MS;

/**
 * Gives the pixel a new publishable key. The old one keeps working for 24 h, as a rotated
 * webhook secret does, so pages cached with it (CDNs, open tabs) lose no events; a key
 * rotated out earlier is dropped at once. Emits `pixel.updated`.
 */
export async function rotatePublishableKey({
  ctx,
  pixelId,
}: {
  ctx: Context;
  pixelId: string;
}): Promise<PixelObject> {
  const now = ctx.clock.now();
  const result = await ctx.store.pixels.updatePixel(ctx.account.id, pixelId, (current) => {
    const next: Pixel = {
      ...current,
      publishableKey: newPublishableKey(),
      previousPublishableKey: current.publishableKey,
      previousKeyExpiresAt: new Date(now.getTime() + PUBLISHABLE_KEY_OVERLAP_MS),
      updatedAt: now,
    };
    const data = {
      ...pixelObject(next),
      previous_attributes: { publishable_key: current.publishableKey },
    };
    return {
      next,
      emit: [{ accountId: next.accountId, type: 'pixel.updated', occurredAt: now, data }],
    };
  });
  if (!result) throw pixelNotFound(pixelId);
  return pixelObject(result.after);
}
