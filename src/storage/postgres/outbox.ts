import type pg from 'pg';
import { newMessageId } from '../../domain/ids.ts';
import type { WebhookEvent } from '../../domain/model.ts';

/** Anything that can run a query: the pool, or one client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Inserts messages and their deliveries with two statements, however many there are. */
export async function insertMessages(
  db: Queryable,
  messages: Array<{ event: WebhookEvent; targets: string[] }>,
): Promise<string[]> {
  const ids: string[] = [];
  const m = { id: [] as string[], account: [] as string[], type: [] as string[] };
  const mData: string[] = [];
  const mAt: Date[] = [];
  const d = { message: [] as string[], endpoint: [] as string[], account: [] as string[] };
  const dAt: Date[] = [];
  for (const { event, targets } of messages) {
    const id = newMessageId();
    ids.push(id);
    m.id.push(id);
    m.account.push(event.accountId);
    m.type.push(event.type);
    mData.push(JSON.stringify(event.data));
    mAt.push(event.occurredAt);
    for (const target of targets) {
      d.message.push(id);
      d.endpoint.push(target);
      d.account.push(event.accountId);
      dAt.push(event.occurredAt);
    }
  }
  if (ids.length === 0) return ids;
  await db.query(
    `INSERT INTO webhook_messages (id, account_id, event_type, data, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])`,
    [m.id, m.account, m.type, mData, mAt],
  );
  if (d.message.length > 0) {
    await db.query(
      `INSERT INTO webhook_deliveries (message_id, endpoint_id, account_id, status, attempts, next_attempt_at)
       SELECT u.m, u.e, u.a, 'pending', 0, u.t
         FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS u(m, e, a, t)`,
      [d.message, d.endpoint, d.account, dAt],
    );
  }
  return ids;
}

/**
 * The transactional outbox: called with the client of the transaction that made the change,
 * it records one message per event and one delivery (with its final body) per subscribed,
 * enabled endpoint. A batch of events costs one endpoint lookup, and nothing more when the
 * accounts have no endpoints.
 */
export async function writeOutbox(db: Queryable, events: WebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  const { rows } = await db.query<{ id: string; account_id: string; type: string }>(
    `SELECT e.id, q.account_id, q.type
       FROM unnest($1::text[], $2::text[]) AS q(account_id, type)
       JOIN webhook_endpoints e ON e.account_id = q.account_id
      WHERE e.enabled AND e.deleted_at IS NULL AND q.type = ANY(e.events)
      ORDER BY e.created_at, e.id`,
    [events.map((e) => e.accountId), events.map((e) => e.type)],
  );
  if (rows.length === 0) return;
  const targets = new Map<string, string[]>();
  for (const row of rows) {
    const key = `${row.account_id}\u0000${row.type}`;
    const list = targets.get(key) ?? [];
    if (!list.includes(row.id)) list.push(row.id);
    targets.set(key, list);
  }
  const messages = events
    .map((event) => ({ event, targets: targets.get(`${event.accountId}\u0000${event.type}`) }))
    .filter((m): m is { event: WebhookEvent; targets: string[] } => m.targets !== undefined);
  await insertMessages(db, messages);
}
