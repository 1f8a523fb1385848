/**
 * Forwarding on PostgreSQL: the reads and the replay are shared (sql/ports/forwarding.ts);
 * here, hand-written, the hot paths: the worker's claims (`FOR UPDATE SKIP LOCKED`, so workers in any number of
 * processes never wait on each other's rows) and settlements (one statement per batch). The
 * jobs of new events are written by the event insert's own statement (events.ts).
 */
import type pg from 'pg';
import type {
  ClaimedBatch,
  ForwardClaim,
  ForwardSettlement,
} from '../../domain/ports/forwarding-store.ts';
import { outcomeReason } from '../../domain/stats/diagnostics.ts';
import { storableText } from '../../domain/webhooks/response-excerpt.ts';
import * as destinations from '../queries/destinations.ts';
import type { ForwardingQueue } from '../sql/ports/forwarding.ts';
import { inTransaction } from './database.ts';
import { writeOutbox } from './outbox.ts';
import { drive, PostgresRunner } from './runner.ts';

export class PostgresForwardingQueue implements ForwardingQueue {
  private readonly runner: PostgresRunner;

  /** Set on Citus only: plain PostgreSQL reads the shared query (queries/forwarding.ts). */
  readonly nextDueAt?: () => Promise<Date | null>;

  constructor(
    private readonly pool: pg.Pool,
    sharded = false,
  ) {
    this.runner = new PostgresRunner(pool);
    if (sharded) this.nextDueAt = () => this.earliestDueAcrossShards();
  }

  /**
   * The earliest due job of an active destination, on Citus. The shared query reads it with
   * one index seek per destination (a correlated subquery from `destinations`), which Citus
   * refuses beside a reference table; here the jobs lead and the destinations are a semi-join,
   * which Citus pushes down to every shard, each answering its own minimum. It reads every
   * shard, as the webhook worker's earliest-due read does; the worker runs it only on a
   * wake-up, and a commit wakes it only when it queued jobs (sql/committed.ts).
   */
  private async earliestDueAcrossShards(): Promise<Date | null> {
    const { rows } = await this.pool.query<{ due: Date | null }>({
      name: 'trackway_forwarding_due_distributed',
      text: `SELECT min(j.next_attempt_at) AS due FROM forward_jobs j
              WHERE j.status = 'pending'
                AND (j.account_id, j.destination_id) IN (SELECT d.account_id, d.id
                  FROM destinations d WHERE d.enabled AND d.state <> 'suspended')`,
    });
    return rows[0]?.due ?? null;
  }

  async claim(options: ForwardClaim): Promise<ClaimedBatch[]> {
    // IN, not a correlated EXISTS: Citus refuses a correlated subquery beside a reference table
    // (destinations), and PostgreSQL plans both as the same semi-join.
    const { rows } = await this.pool.query<destinations.DestinationRow>(
      `SELECT * FROM destinations d WHERE enabled AND state <> 'suspended'
          AND NOT (id = ANY($1::text[])) AND ($3::text IS NULL OR id = $3)
          AND (d.account_id, d.id) IN (SELECT j.account_id, j.destination_id FROM forward_jobs j
            WHERE j.status = 'pending' AND j.next_attempt_at <= $2)
        ORDER BY random()`,
      [options.busy, options.now, options.only ?? null],
    );
    const leaseUntil = new Date(options.now.getTime() + options.leaseMs);
    const batches: ClaimedBatch[] = [];
    for (const row of rows) {
      const destination = destinations.toDestination(this.runner.sql.codec, row);
      // The lease moves the job's due time to the lease's end: a leased job is not due, so
      // nobody claims it, and a worker that died leaves it due again when the lease ends.
      const claimed = await this.pool.query<{
        pixel_id: string;
        event_id: string;
        attempts: number;
        created_at: Date;
      }>(
        `WITH due AS (
           SELECT account_id, destination_id, pixel_id, event_id FROM forward_jobs
            WHERE account_id = $6 AND destination_id = $1 AND status = 'pending'
              AND next_attempt_at <= $2
            ORDER BY next_attempt_at LIMIT $3
            FOR UPDATE SKIP LOCKED
         )
         UPDATE forward_jobs j SET lease_until = $4, lease_owner = $5, next_attempt_at = $4
           FROM due
          WHERE j.account_id = due.account_id AND j.destination_id = due.destination_id
            AND j.pixel_id = due.pixel_id AND j.event_id = due.event_id
         RETURNING j.pixel_id, j.event_id, j.attempts, j.created_at`,
        [
          destination.id,
          options.now,
          options.take(destination),
          leaseUntil,
          options.owner,
          destination.accountId,
        ],
      );
      if (claimed.rows.length === 0) continue;
      batches.push({
        destination,
        jobs: claimed.rows.map((r) => ({
          pixelId: r.pixel_id,
          eventId: r.event_id,
          attempts: r.attempts,
          createdAt: r.created_at,
        })),
      });
    }
    return batches;
  }

  async settle(options: ForwardSettlement): Promise<void> {
    const d = options.destination;
    const o = options.outcomes;
    const ledger = o.flatMap((x) => x.attempts.map((a) => ({ x, a })));
    await inTransaction(this.pool, async (db) => {
      // One statement for the batch's outcomes, one for its ledger rows: only jobs whose lease
      // this worker still holds are settled (RETURNING tells which), and only theirs logged.
      // Each outcome finds its job by its key (the LATERAL lookup, LIMIT 1: one index probe
      // per outcome), then the row by its ctid. Joined directly, the planner's estimate for
      // `lease_owner = $11` (≈ 1 row once statistics say it is mostly NULL) made it scan every
      // job of the destination and loop over the outcomes for each: 1.3 s for 1,000 of 50,000
      // jobs, against 37 ms this way. A job updated meanwhile has another ctid: it is left
      // alone, as a lost lease is. Both sides name the account, so on Citus the statement goes
      // to that account's shard as it is (a ctid means nothing across shards).
      const { rows } = await db.query<{
        pixel_id: string;
        event_id: string;
        status: string;
        reason: string | null;
        last_error: string | null;
      }>(
        `UPDATE forward_jobs j SET status = u.status, attempts = j.attempts + u.n,
            reason = u.reason, last_error = u.last_error, forwarded_at = u.forwarded_at,
            next_attempt_at = u.next_attempt_at, lease_until = NULL, lease_owner = NULL
           FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[],
             $9::timestamptz[], $10::timestamptz[])
             AS u(pixel_id, event_id, status, n, reason, last_error, forwarded_at, next_attempt_at)
           CROSS JOIN LATERAL (SELECT f.ctid AS tid FROM forward_jobs f
              WHERE f.account_id = $1 AND f.destination_id = $2 AND f.pixel_id = u.pixel_id
                AND f.event_id = u.event_id LIMIT 1) AS l
          WHERE j.account_id = $1 AND j.ctid = l.tid AND j.lease_owner = $11
         RETURNING j.pixel_id, j.event_id, u.status, u.reason, u.last_error`,
        [
          d.accountId,
          d.id,
          o.map((x) => x.pixelId),
          o.map((x) => x.eventId),
          o.map((x) => x.status),
          o.map((x) => x.attempts.length),
          o.map((x) => x.reason),
          o.map((x) => (x.lastError === null ? null : storableText(x.lastError))),
          o.map((x) => x.forwardedAt),
          o.map((x) => x.nextAttemptAt),
          options.owner,
        ],
      );
      // The diagnostics' forwarding rollup (migration 025): each job settled out of `pending`
      // moves its 1 to its status and reason, in its event's hour and name.
      const moved = rows.filter((r) => r.status !== 'pending');
      if (moved.length > 0) {
        await db.query(
          `INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason,
              n, example_event_id)
           SELECT e.pixel_id, e.account_id, $2, floor(extract(epoch FROM e.timestamp) / 3600)::bigint,
                  m.status, m.reason, sum(m.n), max(e.event_id)
             FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[])
                    AS m (pixel_id, event_id, status, reason, n)
             JOIN events e ON e.pixel_id = m.pixel_id AND e.event_id = m.event_id
                          AND e.account_id = $1
            GROUP BY 1, 2, 4, 5, 6
            ORDER BY 1, 2, 4, 5, 6
           ON CONFLICT (account_id, pixel_id, hour, destination_id, status, reason)
             DO UPDATE SET n = forward_hourly.n + excluded.n,
               example_event_id = CASE WHEN excluded.n > 0 THEN excluded.example_event_id
                                       ELSE forward_hourly.example_event_id END`,
          [
            d.accountId,
            d.id,
            moved.flatMap((r) => [r.pixel_id, r.pixel_id]),
            moved.flatMap((r) => [r.event_id, r.event_id]),
            moved.flatMap((r) => ['pending', r.status]),
            moved.flatMap((r) => ['', outcomeReason(r.status, r.reason, r.last_error)]),
            moved.flatMap(() => [-1, 1]),
          ],
        );
      }
      const settled = new Set(rows.map((r) => `${r.pixel_id}\u0000${r.event_id}`));
      const kept = ledger.filter(({ x }) => settled.has(`${x.pixelId}\u0000${x.eventId}`));
      if (kept.length > 0) {
        await db.query(
          `INSERT INTO forward_attempts (account_id, destination_id, pixel_id, event_id,
              attempted_at, status_code, duration_ms, platform_response, note)
           SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::timestamptz[], $6::int[],
             $7::int[], $8::text[], $9::text[])`,
          [
            d.accountId,
            d.id,
            kept.map(({ x }) => x.pixelId),
            kept.map(({ x }) => x.eventId),
            kept.map(({ a }) => a.attemptedAt),
            kept.map(({ a }) => a.statusCode),
            kept.map(({ a }) => Math.round(a.durationMs)),
            kept.map(({ a }) => storableText(a.platformResponse)),
            kept.map(({ a }) => a.note),
          ],
        );
      }
      if (options.state) {
        await drive(
          db,
          destinations.setDestinationState(
            this.runner.sql,
            d,
            options.state.state,
            options.state.lastError,
          ),
        );
      }
      await writeOutbox(db, options.emit);
    });
  }
}
