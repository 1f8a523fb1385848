/** Webhook endpoint queries, written once for both databases (sql/query.ts). */
import { sql } from 'kysely';
import type { WebhookEndpoint } from '../../domain/model.ts';
import type { Change } from '../../domain/ports/common.ts';
import { type EndpointRow, toEndpoint } from '../rows.ts';
import { applyChange } from '../sql/change.ts';
import {
  all,
  first,
  forUpdate,
  lockAccount,
  note,
  type Query,
  run,
  type Sql,
} from '../sql/query.ts';

const live = (db: Sql, accountId: string) =>
  db.q
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null);

export function* listEndpoints(db: Sql, accountId: string): Query<WebhookEndpoint[]> {
  const rows = yield* all(live(db, accountId).orderBy('created_at').orderBy('id'));
  return rows.map((row) => toEndpoint(db.codec, row as EndpointRow));
}

export function* getEndpoint(
  db: Sql,
  accountId: string,
  endpointId: string,
): Query<WebhookEndpoint | null> {
  const row = yield* first(live(db, accountId).where('id', '=', endpointId));
  return row ? toEndpoint(db.codec, row as EndpointRow) : null;
}

/** The columns a change may write (never the owner, the creation time or the deletion). */
const changeable = (db: Sql, e: WebhookEndpoint) => ({
  url: e.url,
  events: db.store.list(e.events),
  description: e.description,
  enabled: db.store.bool(e.enabled),
  secret: e.secret,
  previous_secret: e.previousSecret,
  previous_secret_expires_at: db.store.timeOrNull(e.previousSecretExpiresAt),
  failing_since: db.store.timeOrNull(e.failingSince),
  disabled_reason: e.disabledReason,
  updated_at: db.store.time(e.updatedAt),
});

/**
 * Registers the endpoint unless the account has `limit` already. Run in a transaction: as for
 * the pixel quota, under the account's lock concurrent registrations cannot pass the limit.
 */
export function* createEndpoint(
  db: Sql,
  e: WebhookEndpoint,
  limit: number | null,
): Query<'created' | 'limit_exceeded'> {
  yield* lockAccount(db, e.accountId);
  if (limit !== null) {
    const row = yield* first(
      db.q
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', e.accountId)
        .where('deleted_at', 'is', null),
    );
    if (Number(row?.n ?? 0) >= limit) return 'limit_exceeded';
  }
  yield* run(
    db.q.insertInto('webhook_endpoints').values({
      id: e.id,
      account_id: e.accountId,
      created_at: db.store.time(e.createdAt),
      ...changeable(db, e),
    }),
  );
  return 'created';
}

/**
 * Locked: concurrent changes to one endpoint apply one after the other, each to the row the
 * previous one left (no lost update).
 */
export function updateEndpoint(
  db: Sql,
  accountId: string,
  endpointId: string,
  change: Change<WebhookEndpoint>,
) {
  return applyChange(
    (function* () {
      const row = yield* first(forUpdate(db, live(db, accountId).where('id', '=', endpointId)));
      return row ? toEndpoint(db.codec, row as EndpointRow) : null;
    })(),
    change,
    function* (e, before) {
      yield* run(
        db.q.updateTable('webhook_endpoints').set(changeable(db, e)).where('id', '=', e.id),
      );
      // Switched back on: what it had pending is claimable again.
      if (!before.enabled && e.enabled) yield* note({ outbox: true });
    },
  );
}

/** Run in a transaction: the endpoint goes, and what it had pending is canceled with it. */
export function* deleteEndpoint(
  db: Sql,
  accountId: string,
  endpointId: string,
  at: Date,
): Query<boolean> {
  const changed = yield* run(
    db.q
      .updateTable('webhook_endpoints')
      .set({ deleted_at: db.store.time(at), enabled: db.store.bool(false) })
      .where('account_id', '=', accountId)
      .where('id', '=', endpointId)
      .where('deleted_at', 'is', null),
  );
  if (changed === 0) return false;
  yield* run(
    db.q
      .updateTable('webhook_deliveries')
      .set({ status: 'canceled', next_attempt_at: null })
      .where('account_id', '=', accountId)
      .where('endpoint_id', '=', endpointId)
      // A literal, so the planner sees the partial index's condition.
      .where('status', '=', sql.lit('pending')),
  );
  return true;
}
