import type pg from 'pg';
import { newId } from '../../domain/ids.ts';
import type {
  AttemptResult,
  ClaimedDelivery,
  WebhookEvent,
  WebhookEventType,
} from '../../domain/model.ts';
import type { DeliveryClaim, RetryOutcome } from '../../domain/ports/webhook-store.ts';
import { claimedBody, INTERRUPTED_ATTEMPT_ERROR } from '../../domain/webhooks/delivery.ts';
import { GroupCommit } from '../group-commit.ts';
import type { AttemptRecord } from '../queries/webhook-deliveries.ts';
import * as deliveries from '../queries/webhook-deliveries.ts';
import * as rows from '../rows.ts';
import { type EndpointRow, postgresCodec } from '../rows.ts';
import type { DeliveryQueue } from '../sql/ports/webhooks.ts';
import { postgresSql } from '../sql/query.ts';
import { inTransaction } from './database.ts';
import { insertMessages } from './outbox.ts';
import { drive } from './runner.ts';

const toEndpoint = (r: EndpointRow) => rows.toEndpoint(postgresCodec, r);

interface DueRow {
  message_id: string;
  endpoint_id: string;
  account_id: string;
  attempts: number;
  /** Null until the first attempt is claimed. */
  body: string | null;
  event_type: string;
  data: string;
  created_at: Date;
}

/**
 * The delivery queue's PostgreSQL-only parts: the claim, a hand retry, test sends and the group
 * commit of attempts. The rest of the webhook port is shared (sql/ports/webhooks.ts).
 */
export class PostgresDeliveryQueue implements DeliveryQueue {
  constructor(private readonly pool: pg.Pool) {}

  async retryDelivery(
    accountId: string,
    endpointId: string,
    messageId: string,
    at: Date,
  ): Promise<RetryOutcome> {
    // Same condition as a claim's for a free lease: a row under a live lease is being sent.
    // One statement decides both, so a claim cannot slip in between a check and the update.
    const { rows } = await this.pool.query<{ queued: boolean }>(
      `WITH target AS (
         SELECT message_id, endpoint_id, (lease_until IS NULL OR lease_until < $1) AS free
           FROM webhook_deliveries
          WHERE account_id = $2 AND endpoint_id = $3 AND message_id = $4 AND status <> 'canceled'
          FOR UPDATE
       ), queued AS (
         UPDATE webhook_deliveries d
            SET status = 'pending', next_attempt_at = $1, lease_until = NULL, lease_owner = NULL
           FROM target t
          WHERE t.free AND d.message_id = t.message_id AND d.endpoint_id = t.endpoint_id
       )
       SELECT free AS queued FROM target`,
      [at, accountId, endpointId, messageId],
    );
    if (rows.length === 0) return 'not_found';
    return rows[0]!.queued ? 'queued' : 'in_flight';
  }

  async enqueueFor(endpointId: string, event: WebhookEvent): Promise<string> {
    // A message and its delivery: two statements, so one transaction (never half an outbox row).
    const [id] = await inTransaction(this.pool, (db) =>
      insertMessages(db, [{ event, targets: [endpointId] }]),
    );
    return id!;
  }

  async claimDue(options: DeliveryClaim): Promise<ClaimedDelivery[]> {
    const { now } = options;
    return inTransaction(this.pool, async (db) => {
      // A claim need not survive a crash: a lost lease only makes the delivery claimable
      // again, which must happen after a crash anyway (delivery is at least once). So the
      // claim does not wait for its WAL flush.
      await db.query('SET LOCAL synchronous_commit = off');
      // The (account, endpoint) pairs with due work, in random order so none is always served
      // last, then each pair's oldest due deliveries up to its room under the cap (the cap
      // less what this worker has open there): every claim names its account, so on Citus it
      // goes to that account's shard alone. SKIP LOCKED lets concurrent claimers pass over
      // each other's rows instead of waiting, and a locked row's WHERE is re-checked on its
      // newest version (READ COMMITTED), so a row another worker leased meanwhile is dropped.
      const { rows: due } = await db.query<{ account_id: string; endpoint_id: string }>(
        `SELECT p.account_id, p.endpoint_id
           FROM (SELECT DISTINCT account_id, endpoint_id FROM webhook_deliveries
                  WHERE status = 'pending' AND next_attempt_at <= $1
                    AND (lease_until IS NULL OR lease_until < $1)) p
           JOIN webhook_endpoints e ON e.account_id = p.account_id AND e.id = p.endpoint_id
          WHERE e.enabled AND e.deleted_at IS NULL
          ORDER BY random()`,
        [now],
      );
      const rows: DueRow[] = [];
      for (const pair of due) {
        const room = Math.min(
          options.perEndpoint - (options.open[pair.endpoint_id] ?? 0),
          options.limit - rows.length,
        );
        if (room <= 0) continue;
        const claimed = await db.query<DueRow>(
          `SELECT d.message_id, d.endpoint_id, d.account_id, d.attempts, d.body,
                  m.event_type, m.data, m.created_at
             FROM (SELECT message_id, endpoint_id, account_id, attempts, body, next_attempt_at
                     FROM webhook_deliveries
                    WHERE account_id = $1 AND endpoint_id = $2 AND status = 'pending'
                      AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until < $3)
                    ORDER BY next_attempt_at LIMIT $4
                    FOR UPDATE SKIP LOCKED) d
             JOIN webhook_messages m ON m.account_id = d.account_id AND m.id = d.message_id
            WHERE m.account_id = $1
            ORDER BY d.next_attempt_at`,
          [pair.account_id, pair.endpoint_id, now, room],
        );
        rows.push(...claimed.rows);
        if (rows.length >= options.limit) break;
      }
      if (rows.length === 0) return [];
      const accountIds = rows.map((r) => r.account_id);
      const messageIds = rows.map((r) => r.message_id);
      const endpointIds = rows.map((r) => r.endpoint_id);
      // The body is fixed at the first attempt: its `timestamp` is when it was first sent.
      const bodies = rows.map((r) =>
        claimedBody(
          {
            messageId: r.message_id,
            endpointId: r.endpoint_id,
            eventType: r.event_type as WebhookEventType,
            data: r.data,
            body: r.body,
          },
          now,
        ),
      );
      // Per account, so each statement goes to one account's rows (one shard on Citus).
      for (const accountId of new Set(accountIds)) {
        const mine = rows.flatMap((r, i) => (r.account_id === accountId ? [i] : []));
        const m = mine.map((i) => messageIds[i]!);
        const e = mine.map((i) => endpointIds[i]!);
        await db.query(
          `UPDATE webhook_deliveries d SET lease_until = $1, lease_owner = $2,
                  attempts = d.attempts + 1, body = u.b, first_sent_at = COALESCE(d.first_sent_at, $6)
             FROM unnest($3::text[], $4::text[], $5::text[]) AS u(m, e, b)
            WHERE d.account_id = $7 AND d.message_id = u.m AND d.endpoint_id = u.e`,
          [
            new Date(now.getTime() + options.leaseMs),
            options.owner,
            m,
            e,
            mine.map((i) => bodies[i]!),
            now,
            accountId,
          ],
        );
        // An attempt still 'pending' here was cut short (its worker died): say so.
        await db.query(
          `UPDATE webhook_attempts a SET status = 'failed', error = $3
             FROM unnest($1::text[], $2::text[]) AS u(m, e)
            WHERE a.account_id = $4 AND a.message_id = u.m AND a.endpoint_id = u.e
              AND a.status = 'pending'`,
          [m, e, INTERRUPTED_ATTEMPT_ERROR, accountId],
        );
      }
      await db.query(
        `INSERT INTO webhook_attempts (public_id, message_id, endpoint_id, account_id, attempt, status, attempted_at)
         SELECT u.id, u.m, u.e, u.a, u.n, 'pending', $5
           FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $6::text[]) AS u(m, e, a, n, id)`,
        [
          messageIds,
          endpointIds,
          accountIds,
          rows.map((r) => r.attempts + 1),
          now,
          rows.map(() => newId('att')),
        ],
      );
      const endpoints = await db.query<EndpointRow>(
        'SELECT * FROM webhook_endpoints WHERE id = ANY($1::text[])',
        [[...new Set(endpointIds)]],
      );
      const byId = new Map(endpoints.rows.map((r) => [r.id, toEndpoint(r)]));
      return rows.map((row, i) => ({
        messageId: row.message_id,
        endpoint: byId.get(row.endpoint_id)!,
        eventType: row.event_type as WebhookEventType,
        body: bodies[i]!,
        attempt: row.attempts + 1,
        createdAt: row.created_at,
      }));
    });
  }

  /**
   * Attempts finishing together are recorded in one transaction (one WAL flush instead of one
   * each); a failing batch is retried row by row (GroupCommit).
   */
  private readonly records = new GroupCommit<AttemptRecord, void>(
    (items) =>
      inTransaction(this.pool, async (db) => {
        // Rows locked in one order by every worker, so two batches cannot deadlock.
        const ordered = [...items].sort(
          (a, b) =>
            a.delivery.endpoint.id.localeCompare(b.delivery.endpoint.id) ||
            a.delivery.messageId.localeCompare(b.delivery.messageId),
        );
        for (const r of ordered) await drive(db, deliveries.recordAttempt(postgresSql, r));
        return items.map(() => undefined);
      }),
    256,
  );

  recordAttempt(
    delivery: ClaimedDelivery,
    owner: string,
    result: AttemptResult,
    at: Date,
  ): Promise<void> {
    return this.records.one({ delivery, owner, result, at });
  }

  /** Resolves once every attempt handed to recordAttempt is committed (for close()). */
  flushed(): Promise<void> {
    return this.records.flushed();
  }
}
