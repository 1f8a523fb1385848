/** Webhook attempt queries, written once for both databases (sql/query.ts). */
import type { DeliveryAttempt } from '../../domain/model.ts';
import type { Page } from '../../domain/ports/common.ts';
import { type AttemptRow, toAttempt } from '../rows.ts';
import { all, first, type Query, type Sql } from '../sql/query.ts';

/** An endpoint's attempt log, newest first, and how long it is. */
export function* listAttempts(
  db: Sql,
  accountId: string,
  endpointId: string,
  page: Page,
): Query<{ attempts: DeliveryAttempt[]; total: number }> {
  const rows = yield* all(
    db.q
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_messages as m', (join) =>
        join.onRef('m.account_id', '=', 'a.account_id').onRef('m.id', '=', 'a.message_id'),
      )
      .selectAll('a')
      .select('m.event_type')
      .where('a.account_id', '=', accountId)
      .where('a.endpoint_id', '=', endpointId)
      .orderBy('a.attempted_at', 'desc')
      .orderBy('a.id', 'desc')
      .limit(page.limit)
      .offset(page.offset),
  );
  const count = yield* first(
    db.q
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId)
      .where('endpoint_id', '=', endpointId),
  );
  return {
    attempts: rows.map((r) => toAttempt(db.codec, r as AttemptRow)),
    total: Number(count?.n ?? 0),
  };
}
