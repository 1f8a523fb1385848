import { newId } from '../../domain/ids.ts';
import type {
  AttemptResult,
  ClaimedDelivery,
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventType,
} from '../../domain/model.ts';
import type { DeliveryClaim, RetryOutcome } from '../../domain/ports/webhook-store.ts';
import { claimedBody, INTERRUPTED_ATTEMPT_ERROR } from '../../domain/webhooks/delivery.ts';
import { GroupCommit } from '../group-commit.ts';
import type { AttemptRecord } from '../queries/webhook-deliveries.ts';
import * as deliveries from '../queries/webhook-deliveries.ts';
import * as rows from '../rows.ts';
import { type EndpointRow, sqliteCodec } from '../rows.ts';
import type { DeliveryQueue } from '../sql/ports/webhooks.ts';
import { commitWithoutFlush, type SqliteDatabase } from './database.ts';
import type { outboxWriter } from './outbox.ts';
import type { SqliteRunner } from './runner.ts';
import type { DurableCommit } from './wal-sync.ts';

const toEndpoint = (r: EndpointRow) => rows.toEndpoint(sqliteCodec, r);

interface DueRow {
  message_id: string;
  endpoint_id: string;
  attempts: number;
  /** Null until the first attempt is claimed. */
  body: string | null;
  event_type: string;
  data: string;
  created_at: number;
}

/**
 * The delivery queue's SQLite-only parts: the claim, a hand retry, test sends and the group
 * commit of attempts. The rest of the webhook port is shared (sql/ports/webhooks.ts).
 */
export class SqliteDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly runner: SqliteRunner,
    private readonly outbox: ReturnType<typeof outboxWriter>,
    private readonly durable: DurableCommit,
  ) {}

  async retryDelivery(
    accountId: string,
    endpointId: string,
    messageId: string,
    at: Date,
  ): Promise<RetryOutcome> {
    // Same condition as a claim's for a free lease: a row under a live lease is being sent.
    const { changes } = this.runner
      .prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @at, lease_until = NULL, lease_owner = NULL
          WHERE account_id = @accountId AND endpoint_id = @endpointId AND message_id = @messageId
            AND status <> 'canceled' AND (lease_until IS NULL OR lease_until < @at)`,
      )
      .run({ at: at.getTime(), accountId, endpointId, messageId });
    if (changes > 0) return 'queued';
    const exists = this.runner
      .prepare(
        `SELECT 1 FROM webhook_deliveries
          WHERE account_id = ? AND endpoint_id = ? AND message_id = ? AND status <> 'canceled'`,
      )
      .get(accountId, endpointId, messageId);
    return exists ? 'in_flight' : 'not_found';
  }

  async enqueueFor(endpointId: string, event: WebhookEvent): Promise<string> {
    return this.db.transaction(() => this.outbox.writeFor(endpointId, event)).immediate();
  }

  async claimDue(options: DeliveryClaim): Promise<ClaimedDelivery[]> {
    const now = options.now.getTime();
    const full = Object.keys(options.open).filter((id) => options.open[id]! >= options.perEndpoint);
    const busy = JSON.stringify(full);
    // IMMEDIATE takes the write lock before reading, so two workers (even in two processes)
    // can never claim the same row: the second sees the first one's lease.
    //
    // A claim need not survive a crash: a lost lease only means the delivery is claimable
    // again, which is what must happen after a crash anyway (delivery is at least once). So the
    // claim commits without its own fsync; the next durable commit (an event, a recorded
    // attempt) flushes it with everything before it in the WAL.
    return commitWithoutFlush(this.db, () => this.claimInTransaction(options, now, busy));
  }

  private claimInTransaction(
    options: {
      perEndpoint: number;
      open: Readonly<Record<string, number>>;
      limit: number;
      leaseMs: number;
      owner: string;
    },
    now: number,
    busy: string,
  ): ClaimedDelivery[] {
    return this.db
      .transaction(() => {
        // One index seek per enabled endpoint (its oldest due deliveries, up to the cap)
        // instead of ranking the whole backlog: a claim costs the same with 10 or 10 million
        // messages waiting. Endpoints in random order so none is always served last. (Two
        // statements because SQLite has no LATERAL join; the planner otherwise scans every
        // delivery.)
        const endpointIds = this.runner
          .prepare(
            `SELECT id FROM webhook_endpoints
              WHERE enabled = 1 AND deleted_at IS NULL
                AND id NOT IN (SELECT value FROM json_each(?))
              ORDER BY random()`,
          )
          .pluck()
          .all(busy) as string[];
        const dueFor = this.runner.prepare(
          `SELECT d.message_id, d.endpoint_id, d.attempts, d.body, m.event_type, m.data, m.created_at
             FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
            WHERE d.endpoint_id = @endpoint AND d.status = 'pending' AND d.next_attempt_at <= @now
              AND (d.lease_until IS NULL OR d.lease_until < @now)
            ORDER BY d.next_attempt_at LIMIT @take`,
        );
        const due: DueRow[] = [];
        for (const endpoint of endpointIds) {
          if (due.length >= options.limit) break;
          const room = options.perEndpoint - (options.open[endpoint] ?? 0);
          const take = Math.min(room, options.limit - due.length);
          if (take > 0) due.push(...(dueFor.all({ endpoint, now, take }) as DueRow[]));
        }
        if (due.length === 0) return [];
        const lease = this.runner.prepare(
          `UPDATE webhook_deliveries SET lease_until = ?, lease_owner = ?, attempts = attempts + 1,
              body = ?, first_sent_at = COALESCE(first_sent_at, ?)
            WHERE message_id = ? AND endpoint_id = ?`,
        );
        // An attempt still 'pending' here was cut short (its worker died): say so.
        const interrupted = this.runner.prepare(
          `UPDATE webhook_attempts SET status = 'failed', error = ?
            WHERE message_id = ? AND endpoint_id = ? AND status = 'pending'`,
        );
        const attempt = this.runner.prepare(
          `INSERT INTO webhook_attempts (public_id, message_id, endpoint_id, account_id, attempt, status, attempted_at)
           SELECT ?, ?, ?, account_id, ?, 'pending', ? FROM webhook_endpoints WHERE id = ?`,
        );
        const endpoints = new Map<string, WebhookEndpoint>();
        return due.map((row) => {
          const body = claimedBody(
            {
              messageId: row.message_id,
              endpointId: row.endpoint_id,
              eventType: row.event_type as WebhookEventType,
              data: row.data,
              body: row.body,
            },
            new Date(now),
          );
          lease.run(
            now + options.leaseMs,
            options.owner,
            body,
            now,
            row.message_id,
            row.endpoint_id,
          );
          interrupted.run(INTERRUPTED_ATTEMPT_ERROR, row.message_id, row.endpoint_id);
          attempt.run(
            newId('att'),
            row.message_id,
            row.endpoint_id,
            row.attempts + 1,
            now,
            row.endpoint_id,
          );
          let endpoint = endpoints.get(row.endpoint_id);
          if (!endpoint) {
            const e = this.runner
              .prepare('SELECT * FROM webhook_endpoints WHERE id = ?')
              .get(row.endpoint_id) as EndpointRow;
            endpoint = toEndpoint(e);
            endpoints.set(row.endpoint_id, endpoint);
          }
          return {
            messageId: row.message_id,
            endpoint,
            eventType: row.event_type as WebhookEventType,
            body,
            attempt: row.attempts + 1,
            createdAt: new Date(row.created_at),
          };
        });
      })
      .immediate();
  }

  /**
   * Attempts finishing together are recorded in one transaction (one fsync instead of one
   * each): the worker's throughput is bound by commits, not by the receiver. A failing batch is
   * retried row by row (GroupCommit) so one bad record cannot fail its neighbours.
   */
  private readonly records = new GroupCommit<AttemptRecord, void>(
    (items) =>
      this.durable(() =>
        this.db
          .transaction(() => {
            for (const r of items) this.runner.drive(deliveries.recordAttempt(this.runner.sql, r));
            return items.map(() => undefined);
          })
          .immediate(),
      ),
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
