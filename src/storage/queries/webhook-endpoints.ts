/** Webhook endpoint queries, written once for both databases (sql/query.ts). */
import type { WebhookEndpoint } from '../../domain/model.ts';
import { type EndpointRow, toEndpoint } from '../rows.ts';
import { all, first, type Query, type Sql } from '../sql/query.ts';

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
