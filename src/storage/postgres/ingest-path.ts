/**
 * Which of the two ingest paths a PostgreSQL store takes, decided once at open. Two exist
 * because the fastest shape differs: on plain PostgreSQL one statement for the whole batch
 * (events.ts INSERT_BATCH: one round trip, one commit); on Citus one transaction of
 * single-shard statements per account (per-account-ingest.ts), since Citus runs each of
 * INSERT_BATCH's data-modifying CTEs as a distributed step of its own, ~19× slower
 * (bench/results/citus-2026-11-27.md).
 */
import type pg from 'pg';
import type { IngestChoice } from '../../config.ts';

/** `statement`: INSERT_BATCH; `per-account`: per-account-ingest.ts. */
export type IngestPath = Exclude<IngestChoice, 'auto'>;

/** Whether the database is a Citus coordinator (the `citus` extension is there). */
export async function isSharded(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ citus: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus",
  );
  return rows[0]?.citus === true;
}

/** `auto` is the per-account path where the database is sharded (Citus). */
export function chooseIngestPath(sharded: boolean, choice: IngestChoice): IngestPath {
  if (choice !== 'auto') return choice;
  return sharded ? 'per-account' : 'statement';
}
