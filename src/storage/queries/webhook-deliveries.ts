/**
 * Delivery queue queries that are the same logic on both databases (sql/query.ts). Claiming,
 * retrying by hand and the outbox fan-out stay hand-written per database: they are the hot or
 * truly different paths (sqlite/webhooks.ts, postgres/webhooks.ts).
 */
import { sql } from 'kysely';
import type { AttemptResult, ClaimedDelivery } from '../../domain/model.ts';
import type { OutboxBacklog } from '../../domain/ports/webhook-store.ts';
import { afterAttempt } from '../../domain/webhooks/delivery.ts';
import { storableText } from '../../domain/webhooks/response-excerpt.ts';
import { first, isTrue, prepared, type Query, run, type Sql } from '../sql/query.ts';

export interface AttemptRecord {
  delivery: ClaimedDelivery;
  owner: string;
  result: AttemptResult;
  at: Date;
}

/**
 * Records how an attempt ended and what happens next, inside the caller's transaction (the
 * attempts finishing together are one group commit). Prepared: the worker runs it per attempt.
 */
export function* recordAttempt(
  db: Sql,
  { delivery, owner, result, at }: AttemptRecord,
): Query<void> {
  const { messageId } = delivery;
  const { id: endpointId, accountId } = delivery.endpoint;
  // The attempt happened whatever became of the lease: log it. Receivers' text is kept
  // storable whoever produced it (PostgreSQL refuses NUL).
  yield* run(
    logAttempt(
      db,
      result.status,
      result.responseStatusCode,
      result.durationMs,
      result.error === null ? null : storableText(result.error),
      result.responseBody === null ? null : storableText(result.responseBody),
      accountId,
      messageId,
      endpointId,
      delivery.attempt,
    ),
  );
  // Only the lease holder decides what happens next: a manual retry or another worker
  // that took over an expired lease has already rescheduled the delivery.
  const next = afterAttempt(result, at);
  const nextAt = db.store.timeOrNull(next.nextAttemptAt);
  const released = yield* run(
    release(db, next.status, nextAt, accountId, messageId, endpointId, owner),
  );
  if (released === 0) return;
  const failingSince = next.failingSince;
  yield* run(
    db.q
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        failing_since:
          failingSince === null
            ? null
            : eb.fn.coalesce('failing_since', eb.val(db.store.time(failingSince))),
        ...(next.disable !== null && {
          enabled: db.store.bool(false),
          disabled_reason: next.disable,
        }),
      }))
      .where('id', '=', endpointId),
  );
}

const logAttempt = prepared(
  (
    db: Sql,
    status: string,
    code: number | null,
    durationMs: number | null,
    error: string | null,
    body: string | null,
    accountId: string,
    messageId: string,
    endpointId: string,
    attempt: number,
  ) =>
    db.q
      .updateTable('webhook_attempts')
      .set({
        status,
        response_status_code: code,
        duration_ms: durationMs,
        error,
        response_body: body,
      })
      .where('account_id', '=', accountId)
      .where('message_id', '=', messageId)
      .where('endpoint_id', '=', endpointId)
      .where('attempt', '=', attempt)
      .where('status', '=', sql.lit('pending')),
);

const release = prepared(
  (
    db: Sql,
    status: string,
    nextAt: unknown,
    accountId: string,
    messageId: string,
    endpointId: string,
    owner: string,
  ) =>
    db.q
      .updateTable('webhook_deliveries')
      .set({ status, next_attempt_at: nextAt, lease_until: null, lease_owner: null })
      .where('account_id', '=', accountId)
      .where('message_id', '=', messageId)
      .where('endpoint_id', '=', endpointId)
      .where('lease_owner', '=', owner),
);

/** Pending deliveries of enabled endpoints (the others wait for their customer, not us). */
const pending = (db: Sql) =>
  db.q
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', (join) =>
      join.onRef('e.account_id', '=', 'd.account_id').onRef('e.id', '=', 'd.endpoint_id'),
    )
    .where('d.status', '=', sql.lit('pending'))
    .where(isTrue(db, 'e.enabled'));

const earliestDue = prepared((db: Sql) =>
  pending(db).select((eb) => eb.fn.min('d.next_attempt_at').as('due')),
);

const backlogTotals = prepared((db: Sql) =>
  pending(db)
    .innerJoin('webhook_messages as m', (join) =>
      join.onRef('m.account_id', '=', 'd.account_id').onRef('m.id', '=', 'd.message_id'),
    )
    .select((eb) => [
      eb.fn.countAll().as('pending'),
      eb.fn.min('m.created_at').as('oldest'),
      eb.fn.min('d.next_attempt_at').as('due'),
    ]),
);

/**
 * The earliest time a pending delivery is due, to sleep exactly until then. Prepared: the
 * worker reads it on every wake-up, and every commit that stores an event wakes it, so
 * compiling it per call was most of what the seam added to POST /v1/track (docs/decisions.md,
 * "Ingest before and after the seam").
 */
export function* nextDueAt(db: Sql): Query<Date | null> {
  const row = yield* first(earliestDue(db));
  return row?.due == null ? null : db.codec.time(row.due);
}

/** Read at every /metrics scrape. */
export function* backlog(db: Sql): Query<OutboxBacklog> {
  const row = yield* first(backlogTotals(db));
  return {
    pending: Number(row?.pending ?? 0),
    oldestCreatedAt: row?.oldest == null ? null : db.codec.time(row.oldest),
    nextDueAt: row?.due == null ? null : db.codec.time(row.due),
  };
}
