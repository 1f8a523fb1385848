/**
 * A fresh install's first statistics, taken by the store instead of waiting for autovacuum.
 *
 * PostgreSQL checks the raw keys' foreign key (event_match_keys → events (account_id, seq)) with
 * a cached generic plan. Planned while `events` has no statistics, it cannot tell the primary
 * key from `events_dedup` (both begin with account_id) and takes the dedup index, filtering on
 * seq: every check then reads all of the account's events (74–100 ms a commit). Until
 * autovacuum's first ANALYZE replanned it (up to a minute), a fresh install ingested 1,633, 661,
 * 499, then 417 req/s in its first 5-s windows; with this, 3,194, 3,690, 5,924, 8,663. So once a
 * process has stored `after` events while a growing table has never been analyzed, it analyzes
 * those tables once, off the commit path; ANALYZE invalidates every connection's cached plans.
 */
import pg from 'pg';
import { GROWING_TABLES } from '../growing-tables.ts';

/** Enough rows for the statistics to tell a one-row key from an account's whole history. */
export const FIRST_ANALYZE_AFTER = 500;

export class FirstStatistics {
  private stored = 0;
  private state: 'waiting' | 'analyzing' | 'done' = 'waiting';
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: pg.Pool,
    private readonly after = FIRST_ANALYZE_AFTER,
  ) {}

  /** Told after each commit how many events it held. */
  committed(events: number): void {
    if (this.state !== 'waiting') return;
    this.stored += events;
    if (this.stored < this.after) return;
    this.state = 'analyzing';
    this.running = this.analyzeNeverAnalyzed().then(
      () => {
        this.state = 'done';
      },
      // Best effort: autovacuum still does it, as before. Never a request's failure.
      () => {
        this.state = 'done';
      },
    );
  }

  /** Resolves once an analysis begun is over (for close() and tests). */
  settled(): Promise<void> {
    return this.running;
  }

  private async analyzeNeverAnalyzed(): Promise<void> {
    // reltuples is -1 until a table's first VACUUM or ANALYZE (PostgreSQL 14 and later).
    const { rows } = await this.pool.query<{ name: string }>(
      `SELECT t AS name FROM unnest($1::text[]) AS t
        WHERE (SELECT reltuples FROM pg_class WHERE oid = to_regclass(t)) < 0`,
      [GROWING_TABLES],
    );
    for (const { name } of rows) await this.pool.query(`ANALYZE ${pg.escapeIdentifier(name)}`);
  }
}
