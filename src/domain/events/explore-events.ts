/**
 * The dashboard's events explorer (issue 34): a page of a pixel's events with each one's
 * forwarding status per destination, filtered by name, dates, source and a destination's
 * status, paged by a cursor both ways (`older`/`newer` than an event's (timestamp, seq)).
 */
import type { Context } from '../context.ts';
import { invalidParameter, pixelNotFound } from '../errors.ts';
import type { Destination } from '../forwarding/model.ts';
import type { ForwardStatus } from '../ports/forwarding-store.ts';
import type { ExplorerPage, ExplorerQuery } from '../ports/stats-store.ts';
import { dateRange } from './list-events.ts';

export const EXPLORER_PAGE = 50;
const STATUSES: readonly ForwardStatus[] = ['pending', 'forwarded', 'failed', 'skipped'];
const SOURCES = ['server', 'browser'];

export interface ExplorerInput {
  event_name?: string | undefined;
  start_date?: string | undefined;
  end_date?: string | undefined;
  source?: string | undefined;
  /** A forwarding status, of `destination_id` or (empty) of any destination. */
  status?: string | undefined;
  destination_id?: string | undefined;
  /** `<ms>.<seq>` of the event the page starts after (older) or before (newer). */
  before?: string | undefined;
  after?: string | undefined;
}

/** An event's place in the list, as the explorer's links carry it. */
export const cursorOf = (timestamp: Date, seq: number) => `${timestamp.getTime()}.${seq}`;

function parseCursor(value: string, name: string): { timestamp: Date; seq: number } {
  const match = /^(-?\d{1,15})\.(\d{1,15})$/.exec(value);
  if (!match) throw invalidParameter(name, 'is not a cursor from this page');
  return { timestamp: new Date(Number(match[1])), seq: Number(match[2]) };
}

export async function exploreEvents({
  ctx,
  pixelId,
  input,
}: {
  ctx: Context;
  pixelId: string;
  input: ExplorerInput;
}): Promise<ExplorerPage & { destinations: Destination[] }> {
  const given = (v: string | undefined) =>
    v === undefined || v.trim() === '' ? undefined : v.trim();
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const destinations = await ctx.store.destinations.listDestinations(ctx.account.id, pixelId);
  const { from, to } = dateRange({
    start_date: given(input.start_date),
    end_date: given(input.end_date),
  });
  if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime()))) {
    throw invalidParameter('start_date', 'must be a date (YYYY-MM-DD)');
  }
  const source = given(input.source);
  if (source !== undefined && !SOURCES.includes(source)) {
    throw invalidParameter('source', 'must be server or browser');
  }
  const status = given(input.status);
  if (status !== undefined && !STATUSES.includes(status as ForwardStatus)) {
    throw invalidParameter('status', 'must be pending, forwarded, failed or skipped');
  }
  const destinationId = given(input.destination_id);
  if (destinationId !== undefined && !destinations.some((d) => d.id === destinationId)) {
    throw invalidParameter('destination_id', 'is not a destination of this pixel');
  }
  const before = given(input.before);
  const after = given(input.after);
  const query: ExplorerQuery = {
    accountId: ctx.account.id,
    pixelId,
    limit: EXPLORER_PAGE,
    ...(given(input.event_name) && { eventName: given(input.event_name)! }),
    ...(source && { source }),
    ...(from && { from }),
    ...(to && { to }),
    ...(status && {
      status: { status: status as ForwardStatus, ...(destinationId && { destinationId }) },
    }),
    ...(before
      ? { cursor: { ...parseCursor(before, 'before'), direction: 'older' as const } }
      : after
        ? { cursor: { ...parseCursor(after, 'after'), direction: 'newer' as const } }
        : {}),
  };
  const page = await ctx.store.stats.explore(query);
  return { ...page, destinations };
}
