/**
 * Forwarding on SQLite: the reads and the replay are shared (sql/ports/forwarding.ts, on
 * queries/forwarding.ts); here, hand-written, the hot paths: jobs written with each new event,
 * the worker's claims and settlements.
 */
import type { Destination } from '../../domain/forwarding/model.ts';
import type { TrackedEvent } from '../../domain/model.ts';
import type {
  ClaimedBatch,
  ForwardClaim,
  ForwardSettlement,
} from '../../domain/ports/forwarding-store.ts';
import { storableText } from '../../domain/webhooks/response-excerpt.ts';
import * as destinations from '../queries/destinations.ts';
import type { ForwardingQueue } from '../sql/ports/forwarding.ts';
import { commitWithoutFlush, type SqliteDatabase } from './database.ts';
import { settlementMover } from './diagnostics.ts';
import type { outboxWriter } from './outbox.ts';
import { SqliteRunner } from './runner.ts';
import type { DurableCommit } from './wal-sync.ts';

/** Ledger rows written by one INSERT (9 parameters each: 450, far under SQLite's limit). */
const LEDGER_ROWS = 50;
const LEDGER_COLUMNS = 9;

/** A pixel's enabled destinations, as the event insert needs them. */
interface Target {
  id: string;
  /** Event names to forward; null: all. */
  events: Set<string> | null;
  /** Sources to take (`server`, `browser`); null: both. */
  sources: string[] | null;
}

/**
 * Writes the forwarding jobs of a new event, inside the event's transaction (the transactional
 * outbox). `memo` remembers each pixel's targets for the rest of the transaction (they cannot
 * change while it holds the write lock), so a pixel without destinations costs one indexed
 * lookup per batch, not per event.
 */
export function forwardJobWriter(db: SqliteDatabase) {
  const targets = db.prepare<
    [string, string],
    { id: string; events: string | null; sources: string | null }
  >(
    'SELECT id, events, sources FROM destinations WHERE account_id = ? AND pixel_id = ? AND enabled = 1',
  );
  const job = db.prepare(
    `INSERT INTO forward_jobs (account_id, destination_id, pixel_id, event_id, status, attempts,
       created_at, next_attempt_at)
     VALUES (?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING`,
  );
  /** Returns how many jobs it queued for the event. */
  return (
    event: TrackedEvent,
    memo: Map<string, Target[]>,
    onJob?: (destinationId: string) => void,
  ): number => {
    const key = `${event.accountId}\u0000${event.pixelId}`;
    let list = memo.get(key);
    if (!list) {
      list = targets.all(event.accountId, event.pixelId).map((r) => ({
        id: r.id,
        events: r.events === null ? null : new Set(JSON.parse(r.events) as string[]),
        sources: r.sources === null ? null : (JSON.parse(r.sources) as string[]),
      }));
      memo.set(key, list);
    }
    if (list.length === 0) return 0;
    const at = event.receivedAt.getTime();
    let queued = 0;
    for (const target of list) {
      if (target.events !== null && !target.events.has(event.eventName)) continue;
      if (target.sources !== null && !target.sources.includes(event.source ?? 'server')) continue;
      const { changes } = job.run(event.accountId, target.id, event.pixelId, event.eventId, at, at);
      queued += changes;
      if (changes > 0) onJob?.(target.id);
    }
    return queued;
  };
}

export class SqliteForwardingQueue implements ForwardingQueue {
  private readonly runner: SqliteRunner;
  private readonly moveOutcome;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: ReturnType<typeof outboxWriter>,
    private readonly durable: DurableCommit,
  ) {
    this.runner = new SqliteRunner(db);
    this.moveOutcome = settlementMover(db);
  }

  async claim(options: ForwardClaim): Promise<ClaimedBatch[]> {
    const now = options.now.getTime();
    const leaseUntil = now + options.leaseMs;
    // A lost claim only makes the jobs claimable again, which is what a crash must do anyway:
    // no fsync of its own (the settlement's durable commit flushes it).
    return commitWithoutFlush(this.db, () =>
      this.db
        .transaction(() => {
          const active = this.activeDestinations(JSON.stringify(options.busy), now, options.only);
          // One statement per destination: its oldest due jobs (a seek of forward_jobs_due),
          // leased. The lease moves the job's due time to the lease's end: a leased job is not
          // due, so nobody claims it, and a worker that died leaves it due again when the lease
          // ends.
          const lease = this.runner.prepare(
            `UPDATE forward_jobs SET lease_until = @leaseUntil, lease_owner = @owner,
                next_attempt_at = @leaseUntil
              WHERE rowid IN (SELECT rowid FROM forward_jobs
                WHERE destination_id = @destination AND status = 'pending'
                  AND next_attempt_at <= @now
                ORDER BY next_attempt_at LIMIT @take)
              RETURNING rowid, pixel_id, event_id, attempts, created_at`,
          );
          const batches: ClaimedBatch[] = [];
          for (const destination of active) {
            const rows = lease.all({
              leaseUntil,
              owner: options.owner,
              destination: destination.id,
              now,
              take: options.take(destination),
            }) as Array<{
              rowid: number;
              pixel_id: string;
              event_id: string;
              attempts: number;
              created_at: number;
            }>;
            if (rows.length === 0) continue;
            // RETURNING has no order: oldest first, as they were written.
            rows.sort((a, b) => a.created_at - b.created_at || a.rowid - b.rowid);
            batches.push({
              destination,
              jobs: rows.map((r) => ({
                pixelId: r.pixel_id,
                eventId: r.event_id,
                attempts: r.attempts,
                createdAt: new Date(r.created_at),
                ref: r.rowid,
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
        ? this.runner
            .prepare(
              `SELECT * FROM destinations d WHERE enabled = 1 AND state <> 'suspended'
                AND id NOT IN (SELECT value FROM json_each(?)) AND ${due}
              ORDER BY random()`,
            )
            .all(busy, now)
        : this.runner
            .prepare(
              `SELECT * FROM destinations d WHERE id = ? AND enabled = 1 AND state <> 'suspended'
                AND ${due}`,
            )
            .all(only, now)
    ) as destinations.DestinationRow[];
    return rows.map((r) => destinations.toDestination(this.runner.sql.codec, r));
  }

  async settle(options: ForwardSettlement): Promise<void> {
    const d = options.destination;
    // By the rowid the claim handed out (no seek of the four-column key), still only while
    // this worker holds the lease and only if it is still that job's row (a VACUUM may
    // renumber rowids: then nothing matches, as if the lease were lost, and the job is sent
    // again when the lease ends — at least once).
    const update = this.runner.prepare(
      `UPDATE forward_jobs SET status = ?, attempts = attempts + ?, reason = ?, last_error = ?,
          forwarded_at = ?, next_attempt_at = ?, lease_until = NULL, lease_owner = NULL
        WHERE rowid = ? AND destination_id = ? AND event_id = ? AND lease_owner = ?`,
    );
    const updateByKey = this.runner.prepare(
      `UPDATE forward_jobs SET status = ?, attempts = attempts + ?, reason = ?, last_error = ?,
          forwarded_at = ?, next_attempt_at = ?, lease_until = NULL, lease_owner = NULL
        WHERE account_id = ? AND destination_id = ? AND pixel_id = ? AND event_id = ?
          AND lease_owner = ?`,
    );
    const columns = `INSERT INTO forward_attempts (account_id, destination_id, pixel_id, event_id,
        attempted_at, status_code, duration_ms, platform_response, note) VALUES `;
    const row = '(?, ?, ?, ?, ?, ?, ?, ?, ?)';
    const ledger = this.runner.prepare(columns + row);
    // The ledger rows LEDGER_ROWS at a time: one statement's overhead per 50 rows, not per row.
    const ledgerMany = this.runner.prepare(columns + Array(LEDGER_ROWS).fill(row).join(', '));
    await this.durable(() =>
      this.db
        .transaction(() => {
          const rows: unknown[] = [];
          for (const o of options.outcomes) {
            const set = [
              o.status,
              o.attempts.length,
              o.reason,
              o.lastError === null ? null : storableText(o.lastError),
              o.forwardedAt?.getTime() ?? null,
              o.nextAttemptAt?.getTime() ?? null,
            ];
            const { changes } =
              o.ref !== undefined
                ? update.run(...set, o.ref, d.id, o.eventId, options.owner)
                : updateByKey.run(...set, d.accountId, d.id, o.pixelId, o.eventId, options.owner);
            // The lease was lost (another worker holds the job now): its outcome is theirs.
            if (changes === 0) continue;
            this.moveOutcome(d.id, o);
            for (const a of o.attempts) {
              rows.push(
                d.accountId,
                d.id,
                o.pixelId,
                o.eventId,
                a.attemptedAt.getTime(),
                a.statusCode,
                a.durationMs,
                storableText(a.platformResponse),
                a.note,
              );
            }
          }
          const many = LEDGER_ROWS * LEDGER_COLUMNS;
          let at = 0;
          for (; at + many <= rows.length; at += many) ledgerMany.run(rows.slice(at, at + many));
          for (; at < rows.length; at += LEDGER_COLUMNS) {
            ledger.run(rows.slice(at, at + LEDGER_COLUMNS));
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
}
