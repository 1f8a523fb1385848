import type { Context } from '../context.ts';
import { invalidParameter, pixelNotFound } from '../errors.ts';
import { forwardingOf, forwardingRecord } from '../forwarding/forwarding-record.ts';
import { DEFAULT_ACTION_SOURCE } from '../forwarding/match-keys.ts';
import { matchQualityOfRecord } from '../forwarding/match-quality.ts';
import type { TrackedEvent } from '../model.ts';
import type { ForwardingEntry } from '../ports/forwarding-store.ts';
import type { EventList, ListEventsQuery } from './schemas.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

const DAY_MS = 86_400_000;

/** A date alone covers that whole UTC day: its start for `start_date`, its end for `end_date`. */
export function bound(value: string | undefined, edge: 'start' | 'end'): Date | undefined {
  if (value === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const start = Date.parse(`${value}T00:00:00.000Z`);
    return new Date(edge === 'start' ? start : start + DAY_MS - 1);
  }
  const instant = new Date(value);
  // Times are kept to the millisecond and Date drops finer digits: a start inside a
  // millisecond (…00.0009Z) begins after that millisecond's start, so it is rounded up, or an
  // event at …00.000Z, before the bound, would match it. An end is rightly rounded down.
  const finer = /\.\d{3}(\d+)/.exec(value)?.[1];
  if (edge === 'start' && finer !== undefined && /[1-9]/.test(finer)) {
    return new Date(instant.getTime() + 1);
  }
  return instant;
}

/**
 * The `start_date` … `end_date` filter of a listing or an export: each bound optional, a start
 * after the end refused.
 */
export function dateRange(query: {
  start_date?: string | undefined;
  end_date?: string | undefined;
}): {
  from: Date | undefined;
  to: Date | undefined;
} {
  const from = bound(query.start_date, 'start');
  const to = bound(query.end_date, 'end');
  if (from && to && from.getTime() > to.getTime()) {
    throw invalidParameter('start_date', 'must not be after end_date');
  }
  return { from, to };
}

export function eventRecord(event: TrackedEvent, forwarding: readonly ForwardingEntry[] = []) {
  return {
    event_id: event.eventId,
    event_name: event.eventName,
    value: event.value,
    currency: event.currency,
    timestamp: event.timestamp.toISOString(),
    status: 'processed' as const,
    pixel_id: event.pixelId,
    url: event.url,
    referrer: event.referrer,
    title: event.title,
    search_string: event.searchString,
    custom_data: event.customData,
    user_data: event.userData,
    action_source: event.actionSource ?? DEFAULT_ACTION_SOURCE,
    match_quality: event.matchQuality ?? matchQualityOfRecord(event.userData),
    source: event.source ?? 'server',
    consent: event.consent ?? null,
    received_at: event.receivedAt.toISOString(),
    dropped: event.dropped ? [...event.dropped] : [],
    forwarding: forwarding.map(forwardingRecord),
  };
}

/** `limit` above the maximum is applied as the maximum, and the response says so. */
export function pageOf(query: { limit?: number | undefined; offset?: number | undefined }) {
  return {
    limit: Math.min(query.limit ?? DEFAULT_LIMIT, MAX_LIMIT),
    offset: query.offset ?? 0,
  };
}

export async function listEvents({
  ctx,
  pixelId,
  query,
}: {
  ctx: Context;
  pixelId: string;
  query: ListEventsQuery;
}): Promise<EventList> {
  const { from, to } = dateRange(query);
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const page = pageOf(query);
  const { events, total } = await ctx.store.events.listEvents({
    accountId: ctx.account.id,
    pixelId,
    ...page,
    ...(query.event_name !== undefined && { eventName: query.event_name }),
    ...(from && { from }),
    ...(to && { to }),
  });
  // One read for the page's forwarding entries, whatever its size.
  const forwarding = await forwardingOf(ctx, pixelId, events);
  return {
    events: events.map((e) => eventRecord(e, forwarding.get(e.eventId))),
    total,
    ...page,
  };
}
