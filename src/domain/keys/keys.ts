/**
 * Keys as the account manages them itself (contract §13): named, scoped, revocable, shown in
 * clear only in the creation response. The CLI's operator verbs are in accounts/accounts.ts.
 */
import { generateApiKey } from '../accounts/api-key.ts';
import type { Context } from '../context.ts';
import { TrackwayError } from '../errors.ts';
import { pageOf } from '../events/list-events.ts';
import { newId } from '../ids.ts';
import type { KeyScope, ManagedKey } from '../model.ts';
import type { PageQuery } from '../pixels/schemas.ts';
import type { CreateKeyInput, KeyObject } from './schemas.ts';

export function keyObject(key: ManagedKey): KeyObject {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    prefix: key.prefix,
    last4: key.last4,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

/** Bounded like every list: `limit` default 50, at most 100 (above is applied as 100). */
export async function listKeys({ ctx, query }: { ctx: Context; query: PageQuery }) {
  const page = pageOf(query);
  const { keys, total } = await ctx.store.keys.pageKeys(ctx.account.id, page);
  return { keys: keys.map(keyObject), total, ...page };
}

export async function createKey({ ctx, input }: { ctx: Context; input: CreateKeyInput }) {
  const name = input.name.trim();
  if (name === '') {
    throw new TrackwayError('invalid_request', 'Missing required field: name', 'name');
  }
  const generated = generateApiKey();
  const key: ManagedKey = {
    id: newId('key'),
    accountId: ctx.account.id,
    name,
    scope: input.scope ?? 'full',
    prefix: generated.prefix,
    last4: generated.last4,
    createdAt: ctx.clock.now(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await ctx.store.keys.createKey({ ...key, hash: generated.hash });
  return { ...keyObject(key), key: generated.apiKey };
}

/** Revoking is idempotent; another account's key is 404 like a key that never existed. */
export async function revokeKey({ ctx, keyId }: { ctx: Context; keyId: string }) {
  const key = await ctx.store.keys.revokeKey(ctx.account.id, keyId, ctx.clock.now());
  if (!key) throw new TrackwayError('not_found', `Key not found: ${keyId}`);
  return keyObject(key);
}

/** What an `ingest` key may call: sending events, nothing that reads or changes the account. */
export const INGEST_ROUTES: ReadonlySet<string> = new Set([
  'POST /v1/track',
  'POST /v1/track/batch',
  'POST /v1/track/validate',
]);

/** `route` is `<METHOD> <route template>`, e.g. `GET /v1/pixels/:pixel_id`. */
export function assertScopeAllows(scope: KeyScope, route: string): void {
  if (scope === 'ingest' && !INGEST_ROUTES.has(route)) {
    throw new TrackwayError('forbidden', `This key's scope (ingest) does not allow ${route}`);
  }
}
