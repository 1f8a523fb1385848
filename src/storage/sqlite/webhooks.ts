import type { Statement } from 'better-sqlite3';
import { newId, newMessageId } from '../../domain/ids.ts';
import type {
  AttemptResult,
  ClaimedDelivery,
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventType,
} from '../../domain/model.ts';
import type {
  Change,
  OutboxBacklog,
  Page,
  RetryOutcome,
  WebhookStore,
} from '../../domain/ports.ts';
import {
  afterAttempt,
  claimedBody,
  INTERRUPTED_ATTEMPT_ERROR,
} from '../../domain/webhooks/delivery.ts';
import { storableText } from '../../domain/webhooks/response-excerpt.ts';
import { GroupCommit } from '../group-commit.ts';
import * as attempts from '../queries/webhook-attempts.ts';
import * as endpoints from '../queries/webhook-endpoints.ts';
import * as rows from '../rows.ts';
import { type EndpointRow, sqliteCodec } from '../rows.ts';
import type { Sql } from '../sql/query.ts';
import { commitWithoutFlush, type SqliteDatabase } from './database.ts';
import type { SqliteRunner } from './runner.ts';
import type { DurableCommit } from './wal-sync.ts';

const toEndpoint = (r: EndpointRow) => rows.toEndpoint(sqliteCodec, r);

interface AttemptRecord {
  delivery: ClaimedDelivery;
  owner: string;
  result: AttemptResult;
  at: Date;
}

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
 * The transactional outbox: called inside the transaction of the change that caused the
 * events, it records one message per event and one delivery (with its final body) per
 * subscribed, enabled endpoint. An account without endpoints pays one indexed lookup.
 */
export function outboxWriter(db: SqliteDatabase): {
  /**
   * `targets`, when given, remembers each (account, event type)'s endpoints for the rest of
   * one transaction: they cannot change while it holds the write lock, and a batch of events
   * for one account then costs one lookup.
   */
  write(events: WebhookEvent[], targets?: Map<string, string[]>): void;
  writeFor(endpointId: string, event: WebhookEvent): string;
} {
  const endpoints = db.prepare<[string, string], { id: string }>(
    `SELECT id FROM webhook_endpoints
      WHERE account_id = ? AND enabled = 1 AND deleted_at IS NULL
        AND EXISTS (SELECT 1 FROM json_each(events) WHERE value = ?)`,
  );
  const message = db.prepare(
    'INSERT INTO webhook_messages (id, account_id, event_type, data, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const delivery = db.prepare(
    `INSERT INTO webhook_deliveries (message_id, endpoint_id, account_id, status, attempts, next_attempt_at)
     VALUES (?, ?, ?, 'pending', 0, ?)`,
  );
  const writeMessage = (event: WebhookEvent, targets: string[]): string => {
    const id = newMessageId();
    const at = event.occurredAt.getTime();
    message.run(id, event.accountId, event.type, JSON.stringify(event.data), at);
    for (const target of targets) {
      delivery.run(id, target, event.accountId, at);
    }
    return id;
  };
  return {
    write(events, memo) {
      for (const event of events) {
        const key = `${event.accountId}\u0000${event.type}`;
        let targets = memo?.get(key);
        if (!targets) {
          targets = endpoints.all(event.accountId, event.type).map((t) => t.id);
          memo?.set(key, targets);
        }
        if (targets.length > 0) writeMessage(event, targets);
      }
    },
    writeFor: (endpointId, event) => writeMessage(event, [endpointId]),
  };
}

export class SqliteWebhookStore implements WebhookStore {
  /** Statements prepared once, on first use (the worker runs these many times a second). */
  private readonly statements = new Map<string, Statement>();
  private statement(sql: string): Statement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  private readonly sql: Sql;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly runner: SqliteRunner,
    private readonly outbox: ReturnType<typeof outboxWriter>,
    private readonly durable: DurableCommit,
  ) {
    this.sql = runner.sql;
  }

  // Endpoints and the attempt log: shared queries (queries/webhook-*.ts).

  createEndpoint(endpoint: WebhookEndpoint, limit: number | null) {
    return this.runner.transaction(() => endpoints.createEndpoint(this.sql, endpoint, limit));
  }

  listEndpoints(accountId: string): Promise<WebhookEndpoint[]> {
    return this.runner.read(() => endpoints.listEndpoints(this.sql, accountId));
  }

  getEndpoint(accountId: string, endpointId: string): Promise<WebhookEndpoint | null> {
    return this.runner.read(() => endpoints.getEndpoint(this.sql, accountId, endpointId));
  }

  updateEndpoint(accountId: string, endpointId: string, change: Change<WebhookEndpoint>) {
    return this.runner.transaction(() =>
      endpoints.updateEndpoint(this.sql, accountId, endpointId, change),
    );
  }

  deleteEndpoint(accountId: string, endpointId: string, at: Date): Promise<boolean> {
    return this.runner.transaction(() =>
      endpoints.deleteEndpoint(this.sql, accountId, endpointId, at),
    );
  }

  listAttempts(accountId: string, endpointId: string, page: Page) {
    return this.runner.read(() => attempts.listAttempts(this.sql, accountId, endpointId, page));
  }

  async retryDelivery(
    accountId: string,
    endpointId: string,
    messageId: string,
    at: Date,
  ): Promise<RetryOutcome> {
    // Same condition as a claim's for a free lease: a row under a live lease is being sent.
    const { changes } = this.statement(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @at, lease_until = NULL, lease_owner = NULL
          WHERE account_id = @accountId AND endpoint_id = @endpointId AND message_id = @messageId
            AND status <> 'canceled' AND (lease_until IS NULL OR lease_until < @at)`,
    ).run({ at: at.getTime(), accountId, endpointId, messageId });
    if (changes > 0) return 'queued';
    const exists = this.statement(
      `SELECT 1 FROM webhook_deliveries
          WHERE account_id = ? AND endpoint_id = ? AND message_id = ? AND status <> 'canceled'`,
    ).get(accountId, endpointId, messageId);
    return exists ? 'in_flight' : 'not_found';
  }

  async enqueueFor(endpointId: string, event: WebhookEvent): Promise<string> {
    return this.db.transaction(() => this.outbox.writeFor(endpointId, event)).immediate();
  }

  async claimDue(options: {
    now: Date;
    limit: number;
    perEndpoint: number;
    open: Readonly<Record<string, number>>;
    leaseMs: number;
    owner: string;
  }): Promise<ClaimedDelivery[]> {
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
        const endpointIds = this.statement(
          `SELECT id FROM webhook_endpoints
              WHERE enabled = 1 AND deleted_at IS NULL
                AND id NOT IN (SELECT value FROM json_each(?))
              ORDER BY random()`,
        )
          .pluck()
          .all(busy) as string[];
        const dueFor = this.statement(
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
        const lease = this.statement(
          `UPDATE webhook_deliveries SET lease_until = ?, lease_owner = ?, attempts = attempts + 1,
              body = ?, first_sent_at = COALESCE(first_sent_at, ?)
            WHERE message_id = ? AND endpoint_id = ?`,
        );
        // An attempt still 'pending' here was cut short (its worker died): say so.
        const interrupted = this.statement(
          `UPDATE webhook_attempts SET status = 'failed', error = ?
            WHERE message_id = ? AND endpoint_id = ? AND status = 'pending'`,
        );
        const attempt = this.statement(
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
            const e = this.statement('SELECT * FROM webhook_endpoints WHERE id = ?').get(
              row.endpoint_id,
            ) as EndpointRow;
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
            for (const r of items) this.writeAttempt(r.delivery, r.owner, r.result, r.at);
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

  private writeAttempt(delivery: ClaimedDelivery, owner: string, result: AttemptResult, at: Date) {
    // The attempt happened whatever became of the lease: log it.
    this.statement(
      `UPDATE webhook_attempts SET status = ?, response_status_code = ?, duration_ms = ?, error = ?, response_body = ?
          WHERE message_id = ? AND endpoint_id = ? AND attempt = ? AND status = 'pending'`,
    ).run(
      result.status,
      result.responseStatusCode,
      result.durationMs,
      // Receivers' text: kept storable whoever produced it, as on PostgreSQL.
      result.error === null ? null : storableText(result.error),
      result.responseBody === null ? null : storableText(result.responseBody),
      delivery.messageId,
      delivery.endpoint.id,
      delivery.attempt,
    );
    // Only the lease holder decides what happens next: a manual retry or another worker
    // that took over an expired lease has already rescheduled the delivery.
    const next = afterAttempt(result, at);
    const { changes } = this.statement(
      `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_until = NULL, lease_owner = NULL
          WHERE message_id = ? AND endpoint_id = ? AND lease_owner = ?`,
    ).run(
      next.status,
      next.nextAttemptAt?.getTime() ?? null,
      delivery.messageId,
      delivery.endpoint.id,
      owner,
    );
    if (changes === 0) return;
    const failingSince = next.failingSince?.getTime() ?? null;
    this.statement(
      `UPDATE webhook_endpoints SET
           failing_since = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(failing_since, ?) END,
           enabled = CASE WHEN ? IS NULL THEN enabled ELSE 0 END,
           disabled_reason = COALESCE(?, disabled_reason)
         WHERE id = ?`,
    ).run(failingSince, failingSince, next.disable, next.disable, delivery.endpoint.id);
  }

  async nextDueAt(): Promise<Date | null> {
    const next = this.statement(
      `SELECT min(d.next_attempt_at) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND e.enabled = 1`,
    )
      .pluck()
      .get() as number | null;
    return next === null ? null : new Date(next);
  }

  async backlog(): Promise<OutboxBacklog> {
    const row = this.statement(
      `SELECT count(*) AS pending, min(m.created_at) AS oldest, min(d.next_attempt_at) AS due
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
         JOIN webhook_messages m ON m.id = d.message_id
        WHERE d.status = 'pending' AND e.enabled = 1`,
    ).get() as { pending: number; oldest: number | null; due: number | null };
    return {
      pending: row.pending,
      oldestCreatedAt: row.oldest === null ? null : new Date(row.oldest),
      nextDueAt: row.due === null ? null : new Date(row.due),
    };
  }
}
