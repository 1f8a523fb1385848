/**
 * How both adapters answer `total` without counting every matching row.
 *
 * Three pre-aggregated tables, maintained in the transaction that inserts the events
 * (duplicates add nothing), keyed by (pixel, account, event name):
 *   event_totals        all time
 *   event_counts_daily  per UTC day   (floor(ms / 86,400,000))
 *   event_counts        per UTC hour  (floor(ms / 3,600,000))
 * A query's total is the all-time row when it has no time bounds. Otherwise it is the sum of
 * the days wholly inside [from, to], the hours wholly inside it but not in those days (at most
 * 23 at each end), and an exact index count of the partial hours at the two edges (at most one
 * hour of rows each). So the rows read grow with the number of days in the range, never with
 * the number of events, and an unbounded total reads one row per event name.
 *
 * Timestamps are whole milliseconds (the ingest path stores JavaScript Dates), so hour h holds
 * [h·HOUR, h·HOUR + HOUR − 1] and every bound below is an inclusive millisecond.
 */
export const HOUR_MS = 3_600_000;
const HOURS_PER_DAY = 24;

/** Floor, not truncation, so events before 1970 land in the right bucket. */
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);
export const dayOf = (ms: number): number => Math.floor(ms / (HOUR_MS * HOURS_PER_DAY));

/** Bucket numbers, `first` inclusive and `end` exclusive; `null` is unbounded. */
export interface BucketRange {
  first: number | null;
  end: number | null;
}

/** Inclusive millisecond bounds of a range counted row by row from the events index. */
export interface ExactRange {
  from: number;
  to: number;
}

export interface TotalPlan {
  /** No time bounds at all: the all-time totals answer alone. */
  allTime: boolean;
  days: BucketRange | null;
  hours: BucketRange[];
  exact: ExactRange[];
}

export function planTotal(from: Date | undefined, to: Date | undefined): TotalPlan {
  const a = from?.getTime();
  const b = to?.getTime();
  const plan: TotalPlan = { allTime: false, days: null, hours: [], exact: [] };
  if (a === undefined && b === undefined) return { ...plan, allTime: true };
  // First hour starting at or after `from`; first hour not ending at or before `to`.
  const firstH = a === undefined ? null : Math.ceil(a / HOUR_MS);
  const endH = b === undefined ? null : Math.floor((b + 1) / HOUR_MS);
  if (firstH !== null && endH !== null && firstH >= endH) {
    // No whole hour inside: the range spans at most two partial hours, count it directly.
    if (a! <= b!) plan.exact.push({ from: a!, to: b! });
    return plan;
  }
  if (a !== undefined && firstH !== null && a < firstH * HOUR_MS) {
    plan.exact.push({ from: a, to: firstH * HOUR_MS - 1 });
  }
  if (b !== undefined && endH !== null && endH * HOUR_MS <= b) {
    plan.exact.push({ from: endH * HOUR_MS, to: b });
  }
  // The whole hours [firstH, endH), as whole days plus the hours left over at either end.
  const firstD = firstH === null ? null : Math.ceil(firstH / HOURS_PER_DAY);
  const endD = endH === null ? null : Math.floor(endH / HOURS_PER_DAY);
  if (firstD !== null && endD !== null && firstD >= endD) {
    plan.hours.push({ first: firstH, end: endH });
    return plan;
  }
  plan.days = { first: firstD, end: endD };
  if (firstH !== null && firstD !== null && firstH < firstD * HOURS_PER_DAY) {
    plan.hours.push({ first: firstH, end: firstD * HOURS_PER_DAY });
  }
  if (endH !== null && endD !== null && endD * HOURS_PER_DAY < endH) {
    plan.hours.push({ first: endD * HOURS_PER_DAY, end: endH });
  }
  return plan;
}

/**
 * The plan as one SQL expression (a sum of scalar subqueries), in either dialect: `scope`
 * is the caller's already-bound `pixel_id = … AND account_id = …[ AND event_name = …]`,
 * `param` binds a value and returns its placeholder, `time` converts a millisecond bound to
 * the store's timestamp representation. `null` when nothing can match.
 */
export function totalSql(
  plan: TotalPlan,
  scope: string,
  param: (value: unknown) => string,
  time: (ms: number) => unknown,
): string | null {
  const parts: string[] = [];
  const sum = (table: string, column: string, range: BucketRange) => {
    const where = [scope];
    if (range.first !== null) where.push(`${column} >= ${param(range.first)}`);
    if (range.end !== null) where.push(`${column} < ${param(range.end)}`);
    parts.push(`(SELECT coalesce(sum(n), 0) FROM ${table} WHERE ${where.join(' AND ')})`);
  };
  if (plan.allTime) parts.push(`(SELECT coalesce(sum(n), 0) FROM event_totals WHERE ${scope})`);
  if (plan.days) sum('event_counts_daily', 'day', plan.days);
  for (const hours of plan.hours) sum('event_counts', 'hour', hours);
  for (const range of plan.exact) {
    parts.push(
      `(SELECT count(*) FROM events WHERE ${scope} AND timestamp >= ${param(time(range.from))} AND timestamp <= ${param(time(range.to))})`,
    );
  }
  return parts.length === 0 ? null : parts.join(' + ');
}

/** A deleted event, as much of it as its buckets need. */
export interface DeletedEvent {
  pixelId: string;
  accountId: string;
  eventName: string;
  timestampMs: number;
  value: number | null;
  /** Its match quality score; null for an event stored before migration 010 (not counted). */
  matchScore: number | null;
  currency: string | null;
}

/** What deleted events take off one hour bucket (the day and all-time rows follow from it). */
export interface BucketDecrement {
  pixelId: string;
  accountId: string;
  eventName: string;
  hour: number;
  day: number;
  n: number;
  valueSum: number;
  /** Taken off the hourly rollup only (the 7-day average reads hours). */
  matchSum: number;
  matchN: number;
}

/**
 * The deleted events grouped by (pixel, account, event name, hour), sorted by that key: both
 * adapters take count rows in this one order, as ingest does, so a delete and a concurrent
 * insert touching the same buckets cannot deadlock.
 */
export function decrementsOf(deleted: Iterable<DeletedEvent>): BucketDecrement[] {
  const byKey = new Map<string, BucketDecrement>();
  for (const e of deleted) {
    const hour = hourOf(e.timestampMs);
    const key = `${e.pixelId}\u0000${e.accountId}\u0000${e.eventName}\u0000${hour}`;
    const bucket = byKey.get(key);
    const scored = e.matchScore !== null;
    if (bucket) {
      bucket.n += 1;
      bucket.valueSum += e.value ?? 0;
      bucket.matchSum += e.matchScore ?? 0;
      bucket.matchN += scored ? 1 : 0;
    } else {
      byKey.set(key, {
        pixelId: e.pixelId,
        accountId: e.accountId,
        eventName: e.eventName,
        hour,
        day: dayOf(e.timestampMs),
        n: 1,
        valueSum: e.value ?? 0,
        matchSum: e.matchScore ?? 0,
        matchN: scored ? 1 : 0,
      });
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...byKey.values()].sort(
    (a, b) =>
      cmp(a.pixelId, b.pixelId) ||
      cmp(a.accountId, b.accountId) ||
      cmp(a.eventName, b.eventName) ||
      a.hour - b.hour,
  );
}

/** The decrements summed per day (for event_counts_daily), in the same key order. */
export function dailyOf(hours: BucketDecrement[]): BucketDecrement[] {
  const byKey = new Map<string, BucketDecrement>();
  for (const h of hours) {
    const key = `${h.pixelId}\u0000${h.accountId}\u0000${h.eventName}\u0000${h.day}`;
    const day = byKey.get(key);
    if (day) {
      day.n += h.n;
      day.valueSum += h.valueSum;
    } else byKey.set(key, { ...h });
  }
  return [...byKey.values()];
}

/** The decrements summed per (pixel, account, event name) (for event_totals), in key order. */
export function totalsOf(hours: BucketDecrement[]): BucketDecrement[] {
  const byKey = new Map<string, BucketDecrement>();
  for (const h of hours) {
    const key = `${h.pixelId}\u0000${h.accountId}\u0000${h.eventName}`;
    const total = byKey.get(key);
    if (total) total.n += h.n;
    else byKey.set(key, { ...h });
  }
  return [...byKey.values()];
}

/** What deleted events take off one revenue_hourly row (migration 025). */
export interface RevenueDecrement {
  pixelId: string;
  accountId: string;
  hour: number;
  eventName: string;
  /** '' for a value sent without a currency, as ingest keeps it. */
  currency: string;
  n: number;
  valueSum: number;
}

/**
 * The deleted events that carried a value (the only ones ingest adds to revenue_hourly),
 * grouped by (pixel, account, hour, event name, currency) and sorted by that key: the order
 * ingest's upserts take those rows in, so a delete and an insert cannot deadlock on them.
 */
export function revenueOf(deleted: Iterable<DeletedEvent>): RevenueDecrement[] {
  const byKey = new Map<string, RevenueDecrement>();
  for (const e of deleted) {
    if (e.value === null) continue;
    const hour = hourOf(e.timestampMs);
    const currency = e.currency ?? '';
    const key = `${e.pixelId}\u0000${e.accountId}\u0000${hour}\u0000${e.eventName}\u0000${currency}`;
    const row = byKey.get(key);
    if (row) {
      row.n += 1;
      row.valueSum += e.value;
    } else {
      const { pixelId, accountId, eventName } = e;
      byKey.set(key, { pixelId, accountId, hour, eventName, currency, n: 1, valueSum: e.value });
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...byKey.values()].sort(
    (a, b) =>
      cmp(a.pixelId, b.pixelId) ||
      cmp(a.accountId, b.accountId) ||
      a.hour - b.hour ||
      cmp(a.eventName, b.eventName) ||
      cmp(a.currency, b.currency),
  );
}
