import type { Context } from '../context.ts';
import { pixelNotFound } from '../errors.ts';
import { dateRange, eventRecord } from '../events/list-events.ts';
import { forwardingOf } from '../forwarding/forwarding-record.ts';
import type { ExportCursor } from '../ports/lifecycle-store.ts';
import type { ExportFormat, ExportQueryInput } from './schemas.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Events one store read returns: bounds what an export holds in memory at once. */
export const EXPORT_PAGE = 250;

/** The columns of a CSV export, in the event record's order. */
export const CSV_COLUMNS = [
  'event_id',
  'event_name',
  'value',
  'currency',
  'timestamp',
  'status',
  'pixel_id',
  'url',
  'referrer',
  'title',
  'search_string',
  'custom_data',
  'user_data',
  'action_source',
  'match_quality',
  'source',
  'consent',
  'received_at',
  'dropped',
] as const;

/** RFC 4180: a field holding a comma, quote or line break is quoted, quotes doubled. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

type ExportRecord = ReturnType<typeof eventRecord>;

const line: Record<ExportFormat, (record: ExportRecord) => string> = {
  ndjson: (record) => `${JSON.stringify(record)}\n`,
  csv: (record) => `${CSV_COLUMNS.map((c) => csvField(record[c])).join(',')}\r\n`,
};

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/**
 * Checks the request (bounds, the pixel) before anything is sent, so a bad one is an ordinary
 * error response; then gives the export as text chunks, one page of events each, read by
 * keyset pagination (never OFFSET) and only as fast as the consumer takes them: memory holds
 * one page whatever the number of events.
 */
export async function exportEvents({
  ctx,
  pixelId,
  query,
}: {
  ctx: Context;
  pixelId: string;
  query: ExportQueryInput;
}): Promise<{ format: ExportFormat; chunks: AsyncGenerator<string> }> {
  const { from, to } = dateRange(query);
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const format = query.format ?? 'ndjson';
  const accountId = ctx.account.id;
  const { lifecycle } = ctx.store;
  async function* chunks(): AsyncGenerator<string> {
    if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\r\n`;
    let after: ExportCursor | null = null;
    do {
      const page = await lifecycle.exportPage({
        accountId,
        pixelId,
        ...(from && { from }),
        ...(to && { to }),
        after,
        limit: EXPORT_PAGE,
      });
      if (page.events.length > 0) {
        // One read per page for its forwarding entries.
        const forwarding = await forwardingOf(ctx, pixelId, page.events);
        yield page.events
          .map((e) => line[format](eventRecord(e, forwarding.get(e.eventId))))
          .join('');
      }
      after = page.next;
      // SQLite reads resolve synchronously: without a turn of the event loop between pages, a
      // client that keeps up would have one export hold the process for its whole length
      // (500,000 events: /healthz waited 14.7 s, issue 30). A macrotask lets waiting requests
      // (and their I/O) run after every page.
      if (after !== null) await nextTurn();
    } while (after !== null);
  }
  return { format, chunks: chunks() };
}
