/**
 * How both adapters answer `total` without counting every matching row.
 *
 * `event_counts` holds, per (pixel, account, event name, UTC hour), how many events were
 * stored, maintained in the transaction that inserts them (duplicates add nothing). A
 * query's total is then the sum of the buckets that lie wholly inside [from, to], plus an
 * exact index count of the rows in the partial hours at either edge: at most one hour of rows
 * each, whatever the size of the pixel. Unbounded queries read buckets only.
 *
 * Timestamps are whole milliseconds (the ingest path stores JavaScript Dates), so an hour h
 * holds [h·HOUR, h·HOUR + HOUR − 1] and every bound below is an inclusive millisecond.
 */
export const HOUR_MS = 3_600_000;

/** The hour bucket of a timestamp: floor, not truncation, so pre-1970 events bucket right. */
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);

/** Inclusive millisecond bounds of a range counted row by row from the events index. */
export interface ExactRange {
  from: number;
  to: number;
}

export interface TotalPlan {
  /** Bucket hours to sum, `first` inclusive, `end` exclusive; `null` means unbounded. */
  buckets: { first: number | null; end: number | null } | null;
  exact: ExactRange[];
}

export function planTotal(from: Date | undefined, to: Date | undefined): TotalPlan {
  const a = from?.getTime();
  const b = to?.getTime();
  // First hour starting at or after `from`; first hour not ending at or before `to`.
  const first = a === undefined ? null : Math.ceil(a / HOUR_MS);
  const end = b === undefined ? null : Math.floor((b + 1) / HOUR_MS);
  if (first !== null && end !== null && first >= end) {
    // No whole hour inside: the range spans at most two partial hours, count it directly.
    return { buckets: null, exact: a! <= b! ? [{ from: a!, to: b! }] : [] };
  }
  const exact: ExactRange[] = [];
  if (a !== undefined && first !== null && a < first * HOUR_MS) {
    exact.push({ from: a, to: first * HOUR_MS - 1 });
  }
  if (b !== undefined && end !== null && end * HOUR_MS <= b) {
    exact.push({ from: end * HOUR_MS, to: b });
  }
  return { buckets: { first, end }, exact };
}
