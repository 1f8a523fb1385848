/**
 * Events per UTC hour or day, by name, with their revenue: read from the per-bucket counts the
 * store keeps at insert (storage/event-totals.ts), so the cost grows with the buckets asked
 * for, never with the events stored.
 */
import type { Context } from '../context.ts';
import { invalidParameter, pixelNotFound, TrackwayError } from '../errors.ts';
import { bound } from '../events/list-events.ts';
import type { StatsInterval } from '../model.ts';
import type { StatsQuery } from '../ports/stats-store.ts';
import type { Stats, StatsQueryInput } from './schemas.ts';

export const MAX_BUCKETS = 1_000;

const WIDTH_MS: Record<StatsInterval, number> = { hour: 3_600_000, day: 86_400_000 };
const DEFAULT_SPAN: Record<StatsInterval, number> = { hour: 24, day: 30 };

interface StatsRequest {
  ctx: Context;
  pixelId: string;
  query: StatsQueryInput;
}

/** The checked range as bucket numbers, for the account's own pixel (else 404). */
async function statsQuery({ ctx, pixelId, query }: StatsRequest): Promise<StatsQuery> {
  const interval = query.interval ?? 'hour';
  const width = WIDTH_MS[interval];
  const to = bound(query.end_date, 'end') ?? ctx.clock.now();
  // Default: the last 24 hours or 30 days, ending with the bucket that holds `to`.
  const from =
    bound(query.start_date, 'start') ??
    new Date((Math.floor(to.getTime() / width) - DEFAULT_SPAN[interval] + 1) * width);
  if (from.getTime() > to.getTime()) {
    throw invalidParameter('start_date', 'must not be after end_date');
  }
  // Every bucket the range touches, whole: a bucket is the finest the counts can answer.
  const first = Math.floor(from.getTime() / width);
  const last = Math.floor(to.getTime() / width);
  if (last - first + 1 > MAX_BUCKETS) {
    throw new TrackwayError(
      'invalid_request',
      `Invalid parameter: start_date the range spans ${last - first + 1} ${interval}s; at most ${MAX_BUCKETS} buckets are returned (use interval=day or a shorter range)`,
      'start_date',
    );
  }
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  return {
    accountId: ctx.account.id,
    pixelId,
    interval,
    first,
    last,
    ...(query.event_name !== undefined && { eventName: query.event_name }),
  };
}

/**
 * The stats answer as JSON text, ready to send: the store writes the buckets' array (the
 * route's largest answer is ~1 MB, and objects then a serializer cost more than the query).
 * Same content as `eventStats`, which the dashboard's overview reads as objects.
 */
export async function eventStatsJson(request: StatsRequest): Promise<string> {
  const q = await statsQuery(request);
  return `{"buckets":${await request.ctx.store.stats.eventStatsJson(q)},"interval":"${q.interval}"}`;
}

export async function eventStats(request: StatsRequest): Promise<Stats> {
  const q = await statsQuery(request);
  const { interval } = q;
  const buckets = await request.ctx.store.stats.eventStats(q);
  // One ISO string per bucket time, not per row: a range over many names repeats each time
  // once per name (1,000 hours × 10 names is 10,000 rows and 1,000 times).
  const starts = new Map<number, string>();
  const startOf = (d: Date) => {
    const ms = d.getTime();
    let s = starts.get(ms);
    if (s === undefined) {
      s = d.toISOString();
      starts.set(ms, s);
    }
    return s;
  };
  return {
    buckets: buckets.map((b) => ({
      start: startOf(b.start),
      event_name: b.eventName,
      count: b.count,
      value_sum: b.valueSum,
    })),
    interval,
  };
}

/**
 * The dashboard overview's chart: the `top` busiest names of the range and the rest as one
 * "other" series, so the page and the query stay small whatever the number of names.
 */
export async function topEventStats(request: StatsRequest & { top: number }) {
  const q = await statsQuery(request);
  return request.ctx.store.stats.topEventStats(q, request.top);
}
