/**
 * Identity stitching: a server event that names its visitor (`anonymous_id`, the `_tw_id`
 * cookie its backend read) gets every match key it lacks from that visitor's browser events.
 */
import type { Context } from '../context.ts';
import { MATCH_KEY_FIELDS, RAW_MATCH_KEY_NAME } from '../forwarding/match-keys.ts';
import type { VisitorKeys } from '../model.ts';

/**
 * The visitor an unvalidated track body names, while their identity is kept; null when it names
 * none (or not as strings: validation reports that). One indexed read, only for such events.
 */
export async function visitorOf(
  ctx: Context,
  body: unknown,
  now: Date,
): Promise<VisitorKeys | null> {
  if (typeof body !== 'object' || body === null) return null;
  const { pixel_id: pixelId, anonymous_id: anonymousId } = body as Record<string, unknown>;
  if (typeof pixelId !== 'string' || typeof anonymousId !== 'string' || anonymousId === '') {
    return null;
  }
  if (pixelId.length > 64 || anonymousId.length > 128) return null;
  return ctx.store.matchKeys.visitorKeys(ctx.account.id, pixelId, anonymousId, now);
}

/**
 * `user_data` with each match key it lacks taken from the visitor (its own values win), and
 * the names of the keys filled, in the order Trackway lists match keys.
 */
export function withVisitorKeys(
  userData: Record<string, string> | undefined,
  visitor: VisitorKeys | null,
): { userData: Record<string, string> | undefined; enriched: string[] } {
  if (visitor === null) return { userData, enriched: [] };
  const filled: Record<string, string> = { ...(userData ?? {}) };
  const enriched: string[] = [];
  for (const field of MATCH_KEY_FIELDS) {
    const value = visitor.matchKeys[RAW_MATCH_KEY_NAME[field]];
    if (value === undefined || filled[field] !== undefined) continue;
    filled[field] = value;
    enriched.push(field);
  }
  return { userData: enriched.length === 0 ? userData : filled, enriched };
}
