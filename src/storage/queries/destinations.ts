/** Destination queries, written once for both databases (sql/query.ts). */
import type { Destination, DestinationState } from '../../domain/forwarding/model.ts';
import type { Platform } from '../../domain/forwarding/platforms/registry.ts';
import type { EventSource } from '../../domain/model.ts';
import type { Codec } from '../rows.ts';
import { all, first, note, type Query, run, type Sql } from '../sql/query.ts';

export interface DestinationRow {
  id: string;
  account_id: string;
  pixel_id: string;
  type: string;
  name: string | null;
  config: unknown;
  events: unknown;
  sources?: unknown;
  enabled: unknown;
  state: string;
  last_error: string | null;
  created_at: unknown;
  updated_at: unknown;
}

export function toDestination(codec: Codec, r: DestinationRow): Destination {
  return {
    id: r.id,
    accountId: r.account_id,
    pixelId: r.pixel_id,
    type: r.type as Platform,
    name: r.name,
    config: codec.json<Record<string, unknown>>(r.config),
    events: r.events === null ? null : codec.json<string[]>(r.events),
    sources: r.sources == null ? null : codec.json<EventSource[]>(r.sources),
    enabled: codec.bool(r.enabled),
    state: r.state as DestinationState,
    lastError: r.last_error,
    createdAt: codec.time(r.created_at),
    updatedAt: codec.time(r.updated_at),
  };
}

const scoped = (db: Sql, accountId: string, pixelId: string) =>
  db.q
    .selectFrom('destinations')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('pixel_id', '=', pixelId);

function values(db: Sql, d: Destination) {
  return {
    id: d.id,
    account_id: d.accountId,
    pixel_id: d.pixelId,
    type: d.type,
    name: d.name,
    config: db.store.json(d.config),
    events: d.events === null ? null : db.store.list(d.events),
    sources: d.sources === null ? null : db.store.list(d.sources),
    enabled: db.store.bool(d.enabled),
    state: d.state,
    last_error: d.lastError,
    created_at: db.store.time(d.createdAt),
    updated_at: db.store.time(d.updatedAt),
  };
}

/** Run in a transaction that holds the pixel's row (pg) or the write lock (SQLite). */
export function* createDestination(
  db: Sql,
  d: Destination,
  limit: number,
): Query<'created' | 'limit_exceeded'> {
  const count = yield* first(
    db.q
      .selectFrom('destinations')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', d.accountId)
      .where('pixel_id', '=', d.pixelId),
  );
  if (Number(count?.n ?? 0) >= limit) return 'limit_exceeded';
  yield* run(db.q.insertInto('destinations').values(values(db, d)));
  return 'created';
}

/** Serialises concurrent creates for one pixel on pg (SQLite's IMMEDIATE already does). */
export function* lockPixel(db: Sql, accountId: string, pixelId: string): Query<void> {
  if (db.dialect !== 'postgres') return;
  yield* first(
    db.q
      .selectFrom('pixels')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', pixelId)
      .forUpdate(),
  );
}

export function* listDestinations(
  db: Sql,
  accountId: string,
  pixelId: string,
): Query<Destination[]> {
  const rows = yield* all(scoped(db, accountId, pixelId).orderBy('created_at').orderBy('id'));
  return rows.map((r) => toDestination(db.codec, r as DestinationRow));
}

export function* getDestination(
  db: Sql,
  accountId: string,
  pixelId: string,
  id: string,
): Query<Destination | null> {
  const row = yield* first(scoped(db, accountId, pixelId).where('id', '=', id));
  return row ? toDestination(db.codec, row as DestinationRow) : null;
}

/** A destination by id alone: the worker's, never a route's (routes are account-scoped). */
export function* destinationById(db: Sql, id: string): Query<Destination | null> {
  const row = yield* first(db.q.selectFrom('destinations').selectAll().where('id', '=', id));
  return row ? toDestination(db.codec, row as DestinationRow) : null;
}

export function* updateDestination(
  db: Sql,
  accountId: string,
  pixelId: string,
  id: string,
  change: (current: Destination) => Destination | null,
): Query<{ before: Destination; after: Destination } | null> {
  const before = yield* getDestination(db, accountId, pixelId, id);
  if (!before) return null;
  const after = change(before);
  if (!after) return { before, after: before };
  const { id: _id, account_id: _a, pixel_id: _p, created_at: _c, ...set } = values(db, after);
  yield* run(
    db.q
      .updateTable('destinations')
      .set(set)
      .where('account_id', '=', accountId)
      .where('pixel_id', '=', pixelId)
      .where('id', '=', id),
  );
  // Resumed (switched on, or out of suspension): what it has waiting is claimable again.
  if (
    (!before.enabled && after.enabled) ||
    (before.state === 'suspended' && after.state !== 'suspended')
  ) {
    yield* note({ forwarding: true });
  }
  return { before, after };
}

export function* deleteDestination(
  db: Sql,
  accountId: string,
  pixelId: string,
  id: string,
): Query<boolean> {
  const n = yield* run(
    db.q
      .deleteFrom('destinations')
      .where('account_id', '=', accountId)
      .where('pixel_id', '=', pixelId)
      .where('id', '=', id),
  );
  if (n === 0) return false;
  yield* run(
    db.q
      .deleteFrom('forward_jobs')
      .where('account_id', '=', accountId)
      .where('destination_id', '=', id),
  );
  yield* run(
    db.q
      .deleteFrom('forward_attempts')
      .where('account_id', '=', accountId)
      .where('destination_id', '=', id),
  );
  return true;
}

/** The state the worker sets after a batch (suspended, failing, active again). */
export function* setDestinationState(
  db: Sql,
  claimed: Destination,
  state: DestinationState,
  lastError: string | null,
): Query<void> {
  // Only the version the batch was sent with: a PATCH since (new credentials, a resume) wins
  // over what the platform said about the old ones.
  yield* run(
    db.q
      .updateTable('destinations')
      .set({ state, last_error: lastError })
      .where('id', '=', claimed.id)
      .where('updated_at', '=', db.store.time(claimed.updatedAt)),
  );
}
