/**
 * Destinations (contract §12): where a pixel's events are forwarded. Every read and write is
 * scoped by the caller's account and the pixel: another account's pixel or destination is
 * "not found", on every route.
 */
import type { Context } from '../context.ts';
import { invalidField, pixelNotFound, TrackwayError } from '../errors.ts';
import { newId } from '../ids.ts';
import { compileValidator } from '../validation.ts';
import type { CreateDestinationInput, UpdateDestinationInput } from './destination-schemas.ts';
import { type Destination, maskSecret } from './model.ts';
import {
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
  platformModule,
} from './platforms/registry.ts';

export type { Destination };

/**
 * Destinations a pixel may have: each multiplies every event into platform requests, and ten
 * covers one of each platform per ad account a shop realistically runs.
 */
export const DESTINATIONS_PER_PIXEL = 10;

const validators = Object.fromEntries(
  PLATFORMS.map((type) => [type, compileValidator(PLATFORM_MODULES[type].config.schema)]),
) as unknown as Record<Platform, (config: unknown) => unknown>;

/**
 * Visible ASCII only: a credential travels in a header (TikTok's `Access-Token`) or a query
 * string, where a CR/LF, a space or a non-ASCII character would make every send fail (or, in
 * a header, split it). Refused when it is given, naming the field, rather than at each send.
 */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/** The type's config schema, its complaints naming `config.<field>`. */
function validConfig(type: Platform, config: unknown): Record<string, unknown> {
  let valid: Record<string, unknown>;
  try {
    valid = validators[type](config) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TrackwayError && error.field !== undefined) {
      const field = `config.${error.field}`;
      throw new TrackwayError(
        error.code,
        error.message.replace(`: ${error.field}`, `: ${field}`),
        field,
      );
    }
    throw error;
  }
  const problem = platformModule(type).config.check?.(valid);
  if (problem) throw invalidField(`config.${problem.field}`, problem.message);
  for (const field of platformModule(type).config.secrets) {
    // A top-level secret travels in a header or a query (a nested one, such as a private key
    // that only signs, has its own rules in the module's check).
    const value = valid[field];
    if (typeof value === 'string' && !HEADER_SAFE.test(value)) {
      throw invalidField(
        `config.${field}`,
        'must be visible ASCII characters only (no spaces, tabs or line breaks)',
      );
    }
  }
  return valid;
}

/** Masks the secret at `path` in `config` (a copy of each object on the way: never the stored one). */
function maskAt(config: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path as [string, ...string[]];
  const value = config[head];
  if (rest.length === 0) {
    if (typeof value === 'string') config[head] = maskSecret(value);
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const copy = { ...(value as Record<string, unknown>) };
    config[head] = copy;
    maskAt(copy, rest);
  }
}

/**
 * The config after a PATCH: omitted fields keep their values; so do the omitted fields of an
 * object holding secrets (`oauth`), so a secret can be replaced without restating the rest.
 * Other objects (`conversion_actions`) are replaced whole.
 */
function mergeConfig(
  type: Platform,
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged = { ...current, ...patch };
  const holders = new Set(
    platformModule(type)
      .config.secrets.filter((f) => f.includes('.'))
      .map((f) => f.split('.')[0]!),
  );
  for (const key of holders) {
    const before = current[key];
    const after = patch[key];
    const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
    if (isObject(before) && isObject(after)) {
      merged[key] = { ...(before as object), ...(after as object) };
    }
  }
  return merged;
}

export function destinationObject(d: Destination) {
  const config: Record<string, unknown> = { ...d.config };
  // The config fields that are credentials: write-only, masked in every answer.
  for (const field of platformModule(d.type).config.secrets) maskAt(config, field.split('.'));
  return {
    id: d.id,
    pixel_id: d.pixelId,
    type: d.type,
    name: d.name,
    config,
    events: d.events,
    sources: d.sources,
    enabled: d.enabled,
    state: d.state,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  };
}

export const destinationNotFound = (id: string) =>
  new TrackwayError('not_found', `Destination not found: ${id}`);

async function ownPixel(ctx: Context, pixelId: string): Promise<void> {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
}

export async function createDestination({
  ctx,
  pixelId,
  input,
}: {
  ctx: Context;
  pixelId: string;
  input: CreateDestinationInput;
}) {
  await ownPixel(ctx, pixelId);
  const config = validConfig(input.type, input.config);
  const now = ctx.clock.now();
  const destination: Destination = {
    id: newId('dst'),
    accountId: ctx.account.id,
    pixelId,
    type: input.type,
    name: input.name ?? null,
    config,
    events: input.events ?? null,
    sources: input.sources ?? null,
    enabled: input.enabled ?? true,
    state: 'active',
    lastError: null,
    createdAt: now,
    updatedAt: now,
  };
  const outcome = await ctx.store.destinations.createDestination(
    destination,
    DESTINATIONS_PER_PIXEL,
  );
  if (outcome === 'limit_exceeded') {
    throw new TrackwayError(
      'forbidden',
      `Subscription limit exceeded: a pixel may have ${DESTINATIONS_PER_PIXEL} destinations`,
    );
  }
  return destinationObject(destination);
}

export async function listDestinations({ ctx, pixelId }: { ctx: Context; pixelId: string }) {
  await ownPixel(ctx, pixelId);
  const list = await ctx.store.destinations.listDestinations(ctx.account.id, pixelId);
  return { destinations: list.map(destinationObject) };
}

export async function existingDestination(
  ctx: Context,
  pixelId: string,
  id: string,
): Promise<Destination> {
  await ownPixel(ctx, pixelId);
  const destination = await ctx.store.destinations.getDestination(ctx.account.id, pixelId, id);
  if (!destination) throw destinationNotFound(id);
  return destination;
}

export async function getDestination({
  ctx,
  pixelId,
  id,
}: {
  ctx: Context;
  pixelId: string;
  id: string;
}) {
  return destinationObject(await existingDestination(ctx, pixelId, id));
}

export async function updateDestination({
  ctx,
  pixelId,
  id,
  input,
}: {
  ctx: Context;
  pixelId: string;
  id: string;
  input: UpdateDestinationInput;
}) {
  await ownPixel(ctx, pixelId);
  const now = ctx.clock.now();
  let invalid: unknown = null;
  const result = await ctx.store.destinations.updateDestination(
    ctx.account.id,
    pixelId,
    id,
    (current) => {
      let config = current.config;
      if (input.config !== undefined) {
        try {
          // Omitted fields keep their values, so a token can be replaced without restating
          // the rest (and without the caller ever reading the old one back).
          config = validConfig(
            current.type,
            mergeConfig(current.type, current.config, input.config),
          );
        } catch (error) {
          invalid = error;
          return null;
        }
      }
      const patch = input.config as Record<string, unknown> | undefined;
      // What the platform checks before it takes events (the secret and the account it must
      // open): correcting either is "new credentials", so it resumes a suspended destination.
      const credentialsChanged = platformModule(current.type).config.credentials.some(
        (f) => patch?.[f] !== undefined && patch[f] !== current.config[f],
      );
      const next: Destination = {
        ...current,
        name: input.name ?? current.name,
        config,
        events: input.events === undefined ? current.events : input.events,
        sources: input.sources === undefined ? current.sources : input.sources,
        enabled: input.enabled ?? current.enabled,
        updatedAt: now,
      };
      // Contract §12: new credentials or `{"enabled": true}` resume a suspended destination.
      if (current.state === 'suspended' && (credentialsChanged || input.enabled === true)) {
        next.state = 'active';
        next.lastError = null;
      }
      return next;
    },
  );
  if (invalid !== null) throw invalid;
  if (!result) throw destinationNotFound(id);
  return destinationObject(result.after);
}

export async function deleteDestination({
  ctx,
  pixelId,
  id,
}: {
  ctx: Context;
  pixelId: string;
  id: string;
}) {
  await ownPixel(ctx, pixelId);
  const deleted = await ctx.store.destinations.deleteDestination(ctx.account.id, pixelId, id);
  if (!deleted) throw destinationNotFound(id);
  return { id, deleted: true };
}
