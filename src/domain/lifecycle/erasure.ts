import type { Context } from '../context.ts';
import { invalidField, pixelNotFound } from '../errors.ts';
import { hashUserData } from '../events/user-data.ts';
import type { PersonKeys } from '../ports/lifecycle-store.ts';
import type { ErasureInput } from './schemas.ts';

/**
 * Arrival numbers one erasure transaction covers. The match is on hashes inside user_data,
 * which no index holds, so each step reads this many rows by primary key: a bounded
 * transaction, and ingest waits at most one step (SQLite's single writer).
 */
export const ERASE_WINDOW = 10_000;

/** Which kinds of key an erasure was asked with, for the audit log (never the values). */
export type PersonKeyKind = keyof PersonKeys;

/**
 * Deletes every event of the pixel (of every pixel of the account with `all_pixels`) stored
 * up to now whose user_data holds any of the given keys, hashed exactly as ingestion hashes
 * them, with its per-bucket counts. An event stored while the erasure runs is not covered:
 * the request erases what was stored when it was made.
 */
export async function erasePerson({
  ctx,
  pixelId,
  input,
  onStart,
}: {
  ctx: Context;
  pixelId: string;
  input: ErasureInput;
  /**
   * Called once the request is known to be valid, before anything is deleted: the audit trail
   * records the erasure first, so one that dies half-way still left its line.
   */
  onStart?: (kinds: PersonKeyKind[]) => void;
}): Promise<{ deleted: number; kinds: PersonKeyKind[] }> {
  const given = input.user_data;
  if (given.email === undefined && given.phone === undefined && given.external_id === undefined) {
    throw invalidField('user_data', 'must hold at least one of email, phone, external_id');
  }
  const hashed = hashUserData(given);
  const keys: PersonKeys = {
    ...(hashed.email !== undefined && { email: hashed.email }),
    ...(hashed.phone !== undefined && { phone: hashed.phone }),
    ...(hashed.external_id !== undefined && { external_id: hashed.external_id }),
  };
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const kinds = Object.keys(keys) as PersonKeyKind[];
  onStart?.(kinds);
  const { lifecycle } = ctx.store;
  const through = await lifecycle.lastSeq(ctx.account.id);
  let deleted = 0;
  for (let after = 0; after < through; after += ERASE_WINDOW) {
    deleted += await lifecycle.erasePerson({
      accountId: ctx.account.id,
      pixelIds: input.all_pixels === true ? null : [pixelId],
      keys,
      afterSeq: after,
      throughSeq: Math.min(after + ERASE_WINDOW, through),
    });
  }
  return { deleted, kinds };
}
