/**
 * A pixel's diagnostics over a period (issue 34): the rollups summed by the store, read by
 * `diagnose`, and each missing-key finding given an example event from a bounded read.
 */
import type { Context } from '../context.ts';
import { invalidParameter, pixelNotFound } from '../errors.ts';
import { bound } from '../events/list-events.ts';
import { type Diagnostics, diagnose } from './diagnostics.ts';

const HOUR_MS = 3_600_000;
/** The longest period summed: a year of hours (the page stays well under 300 ms at 5 M events). */
export const MAX_PERIOD_HOURS = 366 * 24;

/** The periods the dashboard offers, in hours; `custom` takes start_date and end_date. */
export const PERIODS = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type Period = keyof typeof PERIODS | 'custom';

export interface PeriodInput {
  period?: string | undefined;
  start_date?: string | undefined;
  end_date?: string | undefined;
}

export interface ResolvedPeriod {
  period: Period;
  firstHour: number;
  lastHour: number;
  from: Date;
  to: Date;
}

/** The period asked for, as whole hours ending with the hour of `now` (or of end_date). */
export function resolvePeriod(
  input: PeriodInput,
  now: Date,
  fallback: keyof typeof PERIODS = '7d',
): ResolvedPeriod {
  const named = input.period ?? (input.start_date || input.end_date ? 'custom' : fallback);
  if (named !== 'custom' && !Object.hasOwn(PERIODS, named)) {
    throw invalidParameter('period', 'must be one of 24h, 7d, 30d or custom');
  }
  let from: Date;
  let to: Date;
  if (named === 'custom') {
    const valid = (v: string | undefined, edge: 'start' | 'end', name: string) => {
      const d = bound(v || undefined, edge);
      if (d !== undefined && Number.isNaN(d.getTime())) {
        throw invalidParameter(name, 'must be a date (YYYY-MM-DD) or an ISO 8601 time');
      }
      return d;
    };
    to = valid(input.end_date, 'end', 'end_date') ?? now;
    from =
      valid(input.start_date, 'start', 'start_date') ?? new Date(to.getTime() - 7 * 86_400_000);
  } else {
    to = now;
    from = new Date(
      (Math.floor(now.getTime() / HOUR_MS) - PERIODS[named as keyof typeof PERIODS] + 1) * HOUR_MS,
    );
  }
  if (from.getTime() > to.getTime())
    throw invalidParameter('start_date', 'must not be after end_date');
  const firstHour = Math.floor(from.getTime() / HOUR_MS);
  const lastHour = Math.floor(to.getTime() / HOUR_MS);
  if (lastHour - firstHour + 1 > MAX_PERIOD_HOURS) {
    throw invalidParameter('start_date', 'the period is longer than 366 days');
  }
  return { period: named as Period, firstHour, lastHour, from, to };
}

export async function getDiagnostics({
  ctx,
  pixelId,
  period,
}: {
  ctx: Context;
  pixelId: string;
  period: ResolvedPeriod;
}): Promise<Diagnostics> {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const q = {
    accountId: ctx.account.id,
    pixelId,
    firstHour: period.firstHour,
    lastHour: period.lastHour,
  };
  const [rollup, destinations] = await Promise.all([
    ctx.store.stats.diagnostics(q),
    ctx.store.destinations.listDestinations(ctx.account.id, pixelId),
  ]);
  const result = diagnose(rollup, destinations, pixelId);
  // The top findings only get an example: each is one bounded read.
  await Promise.all(
    result.findings.slice(0, SHOWN_FINDINGS).map(async (f) => {
      if (!f.example) return;
      const eventId = await ctx.store.stats.exampleLacking({
        ...q,
        eventName: f.example.eventName,
        qualityKey: QUALITY_KEY[f.example.key] ?? f.example.key,
      });
      f.href =
        eventId === null
          ? `/dashboard/events?${new URLSearchParams({ pixel_id: pixelId, event_name: f.example.eventName })}`
          : `/dashboard/events/${encodeURIComponent(pixelId)}/${encodeURIComponent(eventId)}`;
      if (eventId === null) f.linkText = `See the ${f.example.eventName} events`;
    }),
  );
  return result;
}

/** The findings the page shows (each with an example: one bounded read each). */
export const SHOWN_FINDINGS = 8;

/** The coverage keys' names in an event's match_quality.keys (match-quality.ts). */
const QUALITY_KEY: Record<string, string> = {
  ip: 'client_ip_address',
  ua: 'client_user_agent',
};

/**
 * The pixel's revenue per hour and currency over the period, or with `names` per those event
 * names and currency: never summed across currencies.
 */
export async function revenueOf({
  ctx,
  pixelId,
  period,
  names,
}: {
  ctx: Context;
  pixelId: string;
  period: ResolvedPeriod;
  names?: readonly string[];
}) {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const q = {
    accountId: ctx.account.id,
    pixelId,
    firstHour: period.firstHour,
    lastHour: period.lastHour,
  };
  return ctx.store.stats.revenue(q, names);
}
