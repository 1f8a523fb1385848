import type pg from 'pg';
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
import * as endpoints from '../queries/webhook-endpoints.ts';
import * as rows from '../rows.ts';
import { type AttemptRow, type EndpointRow, postgresCodec } from '../rows.ts';
import { inTransaction } from './database.ts';
import { PostgresRunner } from './runner.ts';

const toEndpoint = (r: EndpointRow) => rows.toEndpoint(postgresCodec, r);
const toAttempt = (r: AttemptRow) => rows.toAttempt(postgresCodec, r);

/** Anything that can run a query: the pool, or one client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Inserts messages and their deliveries with two statements, however many there are. */
async function insertMessages(
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

interface AttemptRecord {
  delivery: ClaimedDelivery;
  owner: string;
  result: AttemptResult;
  at: Date;
}

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

export class PostgresWebhookStore implements WebhookStore {
  private readonly runner: PostgresRunner;

  constructor(private readonly pool: pg.Pool) {
    this.runner = new PostgresRunner(pool);
  }

  async createEndpoint(e: WebhookEndpoint, limit: number | null) {
    return inTransaction(this.pool, async (db): Promise<'created' | 'limit_exceeded'> => {
      // As for the pixel quota: the account row's lock serialises registrations per account,
      // so the count cannot be stale when the insert commits, on any number of instances.
      await db.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [e.accountId]);
      if (limit !== null) {
        const { rows } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL',
          [e.accountId],
        );
        if ((rows[0]?.n ?? 0) >= limit) return 'limit_exceeded';
      }
      await this.insertEndpoint(db, e);
      return 'created';
    });
  }

  private async insertEndpoint(db: Queryable, e: WebhookEndpoint): Promise<void> {
    await db.query(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, description, enabled, secret,
         previous_secret, previous_secret_expires_at, failing_since, disabled_reason, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        e.id,
        e.accountId,
        e.url,
        e.events,
        e.description,
        e.enabled,
        e.secret,
        e.previousSecret,
        e.previousSecretExpiresAt,
        e.failingSince,
        e.disabledReason,
        e.createdAt,
        e.updatedAt,
      ],
    );
  }

  listEndpoints(accountId: string): Promise<WebhookEndpoint[]> {
    return this.runner.read(() => endpoints.listEndpoints(this.runner.sql, accountId));
  }

  getEndpoint(accountId: string, endpointId: string): Promise<WebhookEndpoint | null> {
    return this.runner.read(() => endpoints.getEndpoint(this.runner.sql, accountId, endpointId));
  }

  async updateEndpoint(accountId: string, endpointId: string, change: Change<WebhookEndpoint>) {
    return inTransaction(this.pool, async (db) => {
      // FOR UPDATE: concurrent changes to one endpoint apply one after the other, each to the
      // row the previous one left (no lost update).
      const { rows } = await db.query<EndpointRow>(
        'SELECT * FROM webhook_endpoints WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
        [accountId, endpointId],
      );
      if (!rows[0]) return null;
      const before = toEndpoint(rows[0]);
      const result = change(before);
      if (!result) return { before, after: before };
      const e = result.next;
      await db.query(
        `UPDATE webhook_endpoints SET url = $2, events = $3, description = $4, enabled = $5,
           secret = $6, previous_secret = $7, previous_secret_expires_at = $8, failing_since = $9,
           disabled_reason = $10, updated_at = $11
         WHERE id = $1`,
        [
          e.id,
          e.url,
          e.events,
          e.description,
          e.enabled,
          e.secret,
          e.previousSecret,
          e.previousSecretExpiresAt,
          e.failingSince,
          e.disabledReason,
          e.updatedAt,
        ],
      );
      await writeOutbox(db, result.emit);
      return { before, after: result.next };
    });
  }

  async deleteEndpoint(accountId: string, endpointId: string, at: Date): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      const { rowCount } = await db.query(
        'UPDATE webhook_endpoints SET deleted_at = $1, enabled = false WHERE account_id = $2 AND id = $3 AND deleted_at IS NULL',
        [at, accountId, endpointId],
      );
      if (rowCount === 0) return false;
      await db.query(
        "UPDATE webhook_deliveries SET status = 'canceled', next_attempt_at = NULL WHERE endpoint_id = $1 AND status = 'pending'",
        [endpointId],
      );
      return true;
    });
  }

  async listAttempts(accountId: string, endpointId: string, page: Page) {
    const [rows, total] = await Promise.all([
      this.pool.query<AttemptRow>(
        `SELECT a.*, m.event_type FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id
          WHERE a.account_id = $1 AND a.endpoint_id = $2
          ORDER BY a.attempted_at DESC, a.id DESC LIMIT $3 OFFSET $4`,
        [accountId, endpointId, page.limit, page.offset],
      ),
      this.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_attempts WHERE account_id = $1 AND endpoint_id = $2',
        [accountId, endpointId],
      ),
    ]);
    return { attempts: rows.rows.map(toAttempt), total: total.rows[0]?.n ?? 0 };
  }

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

  async claimDue(options: {
    now: Date;
    limit: number;
    perEndpoint: number;
    open: Readonly<Record<string, number>>;
    leaseMs: number;
    owner: string;
  }): Promise<ClaimedDelivery[]> {
    const { now } = options;
    const openIds = Object.keys(options.open);
    const openCounts = openIds.map((id) => options.open[id]!);
    return inTransaction(this.pool, async (db) => {
      // A claim need not survive a crash: a lost lease only makes the delivery claimable
      // again, which must happen after a crash anyway (delivery is at least once). So the
      // claim does not wait for its WAL flush.
      await db.query('SET LOCAL synchronous_commit = off');
      // Each enabled endpoint's oldest due deliveries, up to its room under the cap (the cap
      // less what this worker has open there), through one index seek
      // per endpoint (LATERAL) instead of ranking the whole backlog, so a claim costs the same
      // however much is waiting; endpoints in random order so none is always served last.
      // SKIP LOCKED lets concurrent claimers pass over each other's rows instead of waiting,
      // and a locked row's WHERE is re-checked on its newest version (READ COMMITTED), so a
      // row another worker leased meanwhile is dropped.
      const { rows } = await db.query<DueRow>(
        `SELECT d.message_id, d.endpoint_id, d.account_id, d.attempts, d.body,
                m.event_type, m.data, m.created_at
           FROM (SELECT id FROM webhook_endpoints
                  WHERE enabled AND deleted_at IS NULL
                  ORDER BY random()) e
           CROSS JOIN LATERAL (
             SELECT d2.message_id, d2.endpoint_id, d2.account_id, d2.attempts, d2.body
               FROM webhook_deliveries d2
              WHERE d2.endpoint_id = e.id AND d2.status = 'pending' AND d2.next_attempt_at <= $1
                AND (d2.lease_until IS NULL OR d2.lease_until < $1)
              ORDER BY d2.next_attempt_at
              LIMIT greatest(0, $3 - coalesce(
                (SELECT o.n FROM unnest($2::text[], $5::int[]) AS o(id, n) WHERE o.id = e.id), 0))
              FOR UPDATE SKIP LOCKED) d
           JOIN webhook_messages m ON m.id = d.message_id
          LIMIT $4`,
        [now, openIds, options.perEndpoint, options.limit, openCounts],
      );
      if (rows.length === 0) return [];
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
      await db.query(
        `UPDATE webhook_deliveries d SET lease_until = $1, lease_owner = $2, attempts = d.attempts + 1,
                body = u.b, first_sent_at = COALESCE(d.first_sent_at, $6)
           FROM unnest($3::text[], $4::text[], $5::text[]) AS u(m, e, b)
          WHERE d.message_id = u.m AND d.endpoint_id = u.e`,
        [
          new Date(now.getTime() + options.leaseMs),
          options.owner,
          messageIds,
          endpointIds,
          bodies,
          now,
        ],
      );
      // An attempt still 'pending' here was cut short (its worker died): say so.
      await db.query(
        `UPDATE webhook_attempts a SET status = 'failed', error = $3
           FROM unnest($1::text[], $2::text[]) AS u(m, e)
          WHERE a.message_id = u.m AND a.endpoint_id = u.e AND a.status = 'pending'`,
        [messageIds, endpointIds, INTERRUPTED_ATTEMPT_ERROR],
      );
      await db.query(
        `INSERT INTO webhook_attempts (public_id, message_id, endpoint_id, account_id, attempt, status, attempted_at)
         SELECT u.id, u.m, u.e, u.a, u.n, 'pending', $5
           FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $6::text[]) AS u(m, e, a, n, id)`,
        [
          messageIds,
          endpointIds,
          rows.map((r) => r.account_id),
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
        for (const r of ordered) await this.writeAttempt(db, r);
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

  private async writeAttempt(
    db: Queryable,
    { delivery, owner, result, at }: AttemptRecord,
  ): Promise<void> {
    // The attempt happened whatever became of the lease: log it.
    await db.query(
      `UPDATE webhook_attempts SET status = $1, response_status_code = $2, duration_ms = $3, error = $4, response_body = $5
        WHERE message_id = $6 AND endpoint_id = $7 AND attempt = $8 AND status = 'pending'`,
      [
        result.status,
        result.responseStatusCode,
        result.durationMs,
        // Receivers' text: kept storable whoever produced it (PostgreSQL refuses NUL).
        result.error === null ? null : storableText(result.error),
        result.responseBody === null ? null : storableText(result.responseBody),
        delivery.messageId,
        delivery.endpoint.id,
        delivery.attempt,
      ],
    );
    // Only the lease holder decides what happens next: a manual retry or another worker
    // that took over an expired lease has already rescheduled the delivery.
    const next = afterAttempt(result, at);
    const { rowCount } = await db.query(
      `UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, lease_until = NULL, lease_owner = NULL
        WHERE message_id = $3 AND endpoint_id = $4 AND lease_owner = $5`,
      [next.status, next.nextAttemptAt, delivery.messageId, delivery.endpoint.id, owner],
    );
    if (rowCount === 0) return;
    await db.query(
      `UPDATE webhook_endpoints SET
         failing_since = CASE WHEN $1::timestamptz IS NULL THEN NULL ELSE COALESCE(failing_since, $1) END,
         enabled = CASE WHEN $2::text IS NULL THEN enabled ELSE false END,
         disabled_reason = COALESCE($2, disabled_reason)
       WHERE id = $3`,
      [next.failingSince, next.disable, delivery.endpoint.id],
    );
  }

  async nextDueAt(): Promise<Date | null> {
    const { rows } = await this.pool.query<{ next: Date | null }>(
      `SELECT min(d.next_attempt_at) AS next FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND e.enabled`,
    );
    return rows[0]?.next ?? null;
  }

  async backlog(): Promise<OutboxBacklog> {
    const { rows } = await this.pool.query<{
      pending: string;
      oldest: Date | null;
      due: Date | null;
    }>(
      `SELECT count(*) AS pending, min(m.created_at) AS oldest, min(d.next_attempt_at) AS due
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
         JOIN webhook_messages m ON m.id = d.message_id
        WHERE d.status = 'pending' AND e.enabled`,
    );
    return {
      pending: Number(rows[0]?.pending ?? 0),
      oldestCreatedAt: rows[0]?.oldest ?? null,
      nextDueAt: rows[0]?.due ?? null,
    };
  }
}
