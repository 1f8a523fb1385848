import type pg from 'pg';
import type { TrackedEvent } from '../../domain/model.ts';
import type { ExportCursor, ExportQuery, LifecycleStore, PersonKeys } from '../../domain/ports.ts';
import { type BucketDecrement, dailyOf, decrementsOf, totalsOf } from '../event-totals.ts';
import type { EventRow } from '../rows.ts';
import { inTransaction } from './database.ts';

interface DeletedRow {
  pixel_id: string;
  account_id: string;
  event_name: string;
  ms: string;
  value: number | null;
  match_score: number | null;
}

const RETURNING = `RETURNING pixel_id, account_id, event_name,
  (extract(epoch FROM timestamp) * 1000)::bigint AS ms, value,
  (match_quality ->> 'score')::float8 AS match_score`;

/** The user_data fields a person is matched on; the names are fixed, never input. */
const KEY_FIELDS = ['email', 'phone', 'external_id'] as const;

/**
 * Takes decrements off one counts table: the rows are locked first in key order (the order
 * ingest takes them in), then lowered, then removed when no event is left in them.
 */
async function uncount(
  db: pg.PoolClient,
  table: 'event_counts' | 'event_counts_daily' | 'event_totals',
  bucket: 'hour' | 'day' | null,
  rows: BucketDecrement[],
): Promise<void> {
  if (rows.length === 0) return;
  const params: unknown[] = [
    rows.map((r) => r.pixelId),
    rows.map((r) => r.accountId),
    rows.map((r) => r.eventName),
    rows.map((r) => r.n),
    rows.map((r) => r.valueSum),
    rows.map((r) => (bucket === 'hour' ? r.hour : r.day)),
    rows.map((r) => r.matchSum),
    rows.map((r) => r.matchN),
  ];
  const d = `unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::float8[], $6::bigint[],
      $7::float8[], $8::bigint[])
    AS d (pixel_id, account_id, event_name, n, value_sum, bucket, match_sum, match_n)`;
  const on = `c.pixel_id = d.pixel_id AND c.account_id = d.account_id AND c.event_name = d.event_name${
    bucket === null ? '' : ` AND c.${bucket} = d.bucket`
  }`;
  const order = `c.pixel_id, c.account_id, c.event_name${bucket === null ? '' : `, c.${bucket}`}`;
  await db.query(
    `SELECT 1 FROM ${table} c JOIN ${d} ON ${on} ORDER BY ${order} FOR UPDATE OF c`,
    params,
  );
  const values =
    bucket === null
      ? ''
      : bucket === 'day'
        ? ', value_sum = c.value_sum - d.value_sum'
        : ', value_sum = c.value_sum - d.value_sum, match_sum = c.match_sum - d.match_sum, match_n = c.match_n - d.match_n';
  await db.query(`UPDATE ${table} c SET n = c.n - d.n${values} FROM ${d} WHERE ${on}`, params);
  // A bucket left with no events is removed: the stats leave out empty buckets.
  await db.query(`DELETE FROM ${table} c USING ${d} WHERE ${on} AND c.n <= 0`, params);
}

export class PostgresLifecycleStore implements LifecycleStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly toEvent: (row: EventRow) => TrackedEvent,
  ) {}

  /** One transaction: the delete, then the counts it takes off. */
  private deleting(sql: string, params: unknown[]): Promise<number> {
    return inTransaction(this.pool, async (db) => {
      const { rows } = await db.query<DeletedRow>(sql, params);
      const hours = decrementsOf(
        rows.map((r) => ({
          pixelId: r.pixel_id,
          accountId: r.account_id,
          eventName: r.event_name,
          timestampMs: Number(r.ms),
          value: r.value,
          matchScore: r.match_score,
        })),
      );
      await uncount(db, 'event_counts', 'hour', hours);
      await uncount(db, 'event_counts_daily', 'day', dailyOf(hours));
      await uncount(db, 'event_totals', null, totalsOf(hours));
      return rows.length;
    });
  }

  async lastSeq(): Promise<number> {
    const { rows } = await this.pool.query<{ seq: string }>(
      'SELECT coalesce(max(seq), 0) AS seq FROM events',
    );
    return Number(rows[0]!.seq);
  }

  async erasePerson(o: {
    accountId: string;
    pixelIds: string[] | null;
    keys: PersonKeys;
    afterSeq: number;
    throughSeq: number;
  }): Promise<number> {
    const params: unknown[] = [o.afterSeq, o.throughSeq, o.accountId];
    const match = KEY_FIELDS.filter((f) => o.keys[f] !== undefined).map((f) => {
      params.push(o.keys[f]);
      return `user_data->>'${f}' = $${params.length}`;
    });
    if (match.length === 0) return 0;
    let pixels = '';
    if (o.pixelIds !== null) {
      params.push(o.pixelIds);
      pixels = `AND pixel_id = ANY($${params.length}::text[])`;
    }
    return this.deleting(
      `DELETE FROM events WHERE seq > $1 AND seq <= $2 AND account_id = $3 ${pixels}
         AND user_data IS NOT NULL AND (${match.join(' OR ')}) ${RETURNING}`,
      params,
    );
  }

  async exportPage(q: ExportQuery) {
    const params: unknown[] = [q.accountId, q.pixelId];
    const where = ['account_id = $1', 'pixel_id = $2'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (q.from) add((p) => `timestamp >= ${p}`, q.from);
    if (q.to) add((p) => `timestamp <= ${p}`, q.to);
    if (q.after) {
      // Not a row comparison: PostgreSQL cannot bound a scan of the (timestamp DESC, seq DESC)
      // index with one, so every page would read from the start. `timestamp >= t` can.
      params.push(q.after.timestamp, q.after.seq);
      const [t, s] = [`$${params.length - 1}`, `$${params.length}`];
      where.push(`timestamp >= ${t} AND (timestamp > ${t} OR seq > ${s})`);
    }
    params.push(q.limit);
    const { rows } = await this.pool.query<EventRow & { seq: string; timestamp: Date }>(
      `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY timestamp, seq LIMIT $${params.length}`,
      params,
    );
    const last = rows.at(-1);
    const next: ExportCursor | null =
      last && rows.length === q.limit ? { timestamp: last.timestamp, seq: Number(last.seq) } : null;
    return { events: rows.map(this.toEvent), next };
  }

  async retentionDays(accountId: string): Promise<number | null> {
    const { rows } = await this.pool.query<{ days: number }>(
      'SELECT days FROM account_retention WHERE account_id = $1',
      [accountId],
    );
    return rows[0]?.days ?? null;
  }

  async setRetentionDays(accountId: string, days: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO account_retention (account_id, days) VALUES ($1, $2)
       ON CONFLICT (account_id) DO UPDATE SET days = excluded.days`,
      [accountId, days],
    );
  }

  purgeBatch(accountId: string, pixelId: string, before: Date, limit: number): Promise<number> {
    return this.deleting(
      `DELETE FROM events WHERE seq IN (
         SELECT seq FROM events WHERE account_id = $1 AND pixel_id = $2 AND timestamp < $3
          ORDER BY timestamp LIMIT $4) ${RETURNING}`,
      [accountId, pixelId, before, limit],
    );
  }
}
