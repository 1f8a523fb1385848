import type { Statement } from 'better-sqlite3';
/**
 * Forwarding on SQLite: destinations and reads through the shared queries
 * (queries/destinations.ts, queries/forwarding.ts, queries/forwardable.ts); the hot paths
 * hand-written: jobs written with each new event, the worker's claims and settlements.
 */
import type { Destination } from '../../domain/forwarding/model.ts';
import type { TrackedEvent, WebhookEvent } from '../../domain/model.ts';
import type {
  ClaimedBatch,
  DestinationBacklog,
  ForwardingEntry,
  ForwardingStore,
  ForwardStatus,
  JobOutcome,
} from '../../domain/ports.ts';
import { storableText } from '../../domain/webhooks/response-excerpt.ts';
import * as destinations from '../queries/destinations.ts';
import * as forwarding from '../queries/forwarding.ts';
import { commitWithoutFlush, type SqliteDatabase } from './database.ts';
import { SqliteRunner } from './runner.ts';
import type { DurableCommit } from './wal-sync.ts';
import type { outboxWriter } from './webhooks.ts';

/** A pixel's enabled destinations, as the event insert needs them. */
interface Target {
  id: string;
  /** Event names to forward; null: all. */
  events: Set<string> | null;
}

/**
 * Writes the forwarding jobs of a new event, inside the event's transaction (the transactional
 * outbox). `memo` remembers each pixel's targets for the rest of the transaction (they cannot
 * change while it holds the write lock), so a pixel without destinations costs one indexed
 * lookup per batch, not per event.
 */
export function forwardJobWriter(db: SqliteDatabase) {
  const targets = db.prepare<[string, string], { id: string; events: string | null }>(
    'SELECT id, events FROM destinations WHERE account_id = ? AND pixel_id = ? AND enabled = 1',
  );
  const job = db.prepare(
    `INSERT INTO forward_jobs (account_id, destination_id, pixel_id, event_id, status, attempts,
       created_at, next_attempt_at)
     VALUES (?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING`,
  );
  return (event: TrackedEvent, memo: Map<string, Target[]>): void => {
    const key = `${event.accountId}\u0000${event.pixelId}`;
    let list = memo.get(key);
    if (!list) {
      list = targets.all(event.accountId, event.pixelId).map((r) => ({
        id: r.id,
        events: r.events === null ? null : new Set(JSON.parse(r.events) as string[]),
      }));
      memo.set(key, list);
    }
    if (list.length === 0) return;
    const at = event.receivedAt.getTime();
    for (const target of list) {
      if (target.events !== null && !target.events.has(event.eventName)) continue;
      job.run(event.accountId, target.id, event.pixelId, event.eventId, at, at);
    }
  };
}

export class SqliteForwardingStore implements ForwardingStore {
  private readonly runner: SqliteRunner;
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: ReturnType<typeof outboxWriter>,
    private readonly durable: DurableCommit,
  ) {
    this.runner = new SqliteRunner(db);
  }

  private statement(sql: string): Statement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  async claim(options: {
    now: Date;
    take: (destination: Destination) => number;
    busy: readonly string[];
    leaseMs: number;
    owner: string;
    only?: string;
  }): Promise<ClaimedBatch[]> {
    const now = options.now.getTime();
    const leaseUntil = now + options.leaseMs;
    // A lost claim only makes the jobs claimable again, which is what a crash must do anyway:
    // no fsync of its own (the settlement's durable commit flushes it).
    return commitWithoutFlush(this.db, () =>
      this.db
        .transaction(() => {
          const active = this.activeDestinations(JSON.stringify(options.busy), now, options.only);
          const due = this.statement(
            `SELECT pixel_id, event_id, attempts, created_at FROM forward_jobs
              WHERE destination_id = ? AND status = 'pending' AND next_attempt_at <= ?
              ORDER BY next_attempt_at LIMIT ?`,
          );
          // The lease moves the job's due time to the lease's end: a leased job is not due, so
          // nobody claims it, and a worker that died leaves it due again when the lease ends.
          const lease = this.statement(
            `UPDATE forward_jobs SET lease_until = ?, lease_owner = ?, next_attempt_at = ?
              WHERE account_id = ? AND destination_id = ? AND pixel_id = ? AND event_id = ?`,
          );
          const batches: ClaimedBatch[] = [];
          for (const destination of active) {
            const rows = due.all(destination.id, now, options.take(destination)) as Array<{
              pixel_id: string;
              event_id: string;
              attempts: number;
              created_at: number;
            }>;
            if (rows.length === 0) continue;
            for (const r of rows) {
              lease.run(
                leaseUntil,
                options.owner,
                leaseUntil,
                destination.accountId,
                destination.id,
                r.pixel_id,
                r.event_id,
              );
            }
            batches.push({
              destination,
              jobs: rows.map((r) => ({
                pixelId: r.pixel_id,
                eventId: r.event_id,
                attempts: r.attempts,
                createdAt: new Date(r.created_at),
              })),
            });
          }
          return batches;
        })
        .immediate(),
    );
  }

  private activeDestinations(busy: string, now: number, only?: string): Destination[] {
    const due = `EXISTS (SELECT 1 FROM forward_jobs j WHERE j.destination_id = d.id
            AND j.status = 'pending' AND j.next_attempt_at <= ?)`;
    // Random order, so no destination is always served last.
    const rows = (
      only === undefined
        ? this.statement(
            `SELECT * FROM destinations d WHERE enabled = 1 AND state <> 'suspended'
                AND id NOT IN (SELECT value FROM json_each(?)) AND ${due}
              ORDER BY random()`,
          ).all(busy, now)
        : this.statement(
            `SELECT * FROM destinations d WHERE id = ? AND enabled = 1 AND state <> 'suspended'
                AND ${due}`,
          ).all(only, now)
    ) as destinations.DestinationRow[];
    return rows.map((r) => destinations.toDestination(this.runner.sql.codec, r));
  }

  async settle(options: {
    destination: Destination;
    owner: string;
    outcomes: JobOutcome[];
    state: { state: Destination['state']; lastError: string | null } | null;
    emit: WebhookEvent[];
  }): Promise<void> {
    const d = options.destination;
    const update = this.statement(
      `UPDATE forward_jobs SET status = ?, attempts = attempts + ?, reason = ?, last_error = ?,
          forwarded_at = ?, next_attempt_at = ?, lease_until = NULL, lease_owner = NULL
        WHERE account_id = ? AND destination_id = ? AND pixel_id = ? AND event_id = ?
          AND lease_owner = ?`,
    );
    const ledger = this.statement(
      `INSERT INTO forward_attempts (account_id, destination_id, pixel_id, event_id, attempted_at,
          status_code, duration_ms, platform_response) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    await this.durable(() =>
      this.db
        .transaction(() => {
          for (const o of options.outcomes) {
            const { changes } = update.run(
              o.status,
              o.attempts.length,
              o.reason,
              o.lastError === null ? null : storableText(o.lastError),
              o.forwardedAt?.getTime() ?? null,
              o.nextAttemptAt?.getTime() ?? null,
              d.accountId,
              d.id,
              o.pixelId,
              o.eventId,
              options.owner,
            );
            // The lease was lost (another worker holds the job now): its outcome is theirs.
            if (changes === 0) continue;
            for (const a of o.attempts) {
              ledger.run(
                d.accountId,
                d.id,
                o.pixelId,
                o.eventId,
                a.attemptedAt.getTime(),
                a.statusCode,
                a.durationMs,
                storableText(a.platformResponse),
              );
            }
          }
          if (options.state) {
            this.runner.drive(
              destinations.setDestinationState(
                this.runner.sql,
                d,
                options.state.state,
                options.state.lastError,
              ),
            );
          }
          this.outbox.write(options.emit, new Map());
        })
        .immediate(),
    );
  }

  nextDueAt(): Promise<Date | null> {
    return this.runner.read(() => forwarding.nextDueAt(this.runner.sql));
  }

  eventForwarding(
    accountId: string,
    pixelId: string,
    eventIds: string[],
    withLog: boolean,
  ): Promise<Map<string, ForwardingEntry[]>> {
    return this.runner.read(() =>
      forwarding.eventForwarding(this.runner.sql, accountId, pixelId, eventIds, withLog),
    );
  }

  replay(options: {
    accountId: string;
    pixelId: string;
    destinationId: string;
    from: Date;
    to: Date;
    statuses: ForwardStatus[];
    now: Date;
  }): Promise<number> {
    const sql = this.runner.sql;
    return this.runner.transaction(function* () {
      const destination = yield* destinations.getDestination(
        sql,
        options.accountId,
        options.pixelId,
        options.destinationId,
      );
      if (!destination) return 0;
      return yield* forwarding.replay(sql, { ...options, destination });
    });
  }

  backlog(): Promise<DestinationBacklog[]> {
    return this.runner.read(() => forwarding.backlog(this.runner.sql));
  }
}
