/**
 * The `forwarding` entries of an event record (contract §12): one per (event, destination),
 * loaded with one query per page of events, never per event.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { Context } from '../context.ts';
import type { TrackedEvent } from '../model.ts';
import type { ForwardingEntry } from '../ports/forwarding-store.ts';

const nullableString = Type.Union([Type.String(), Type.Null()]);

export const AttemptLogEntrySchema = Type.Object({
  attempted_at: Type.String({ format: 'date-time' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The HTTP status, null when no answer came (network error, timeout).',
  }),
  duration_ms: Type.Integer(),
  platform_response: Type.String({
    description: "The first 1 KB of the platform's answer, or the network error.",
  }),
  note: Type.Union([Type.String(), Type.Null()], {
    description:
      "What this request left out of the event to fit the platform's rules (GA4's dropped or truncated params), else null.",
  }),
});

export const ForwardingEntrySchema = Type.Object({
  destination_id: Type.String(),
  platform: Type.String(),
  status: Type.Union(
    [
      Type.Literal('pending'),
      Type.Literal('forwarded'),
      Type.Literal('failed'),
      Type.Literal('skipped'),
    ],
    {
      description:
        '`failed`: a permanent refusal or retries exhausted; `skipped`: not eligible (see `reason`).',
    },
  ),
  attempts: Type.Integer({ description: 'Requests that carried the event.' }),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it was skipped, else null.',
  }),
  last_error: nullableString,
  forwarded_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const ForwardingWithLogSchema = Type.Composite([
  ForwardingEntrySchema,
  Type.Object({ attempt_log: Type.Array(AttemptLogEntrySchema) }),
]);

export type ForwardingRecord = Static<typeof ForwardingEntrySchema> & {
  attempt_log?: Static<typeof AttemptLogEntrySchema>[];
};

export function forwardingRecord(entry: ForwardingEntry): ForwardingRecord {
  const record: ForwardingRecord = {
    destination_id: entry.destinationId,
    platform: entry.platform,
    status: entry.status,
    attempts: entry.attempts,
    reason: entry.reason,
    last_error: entry.lastError,
    forwarded_at: entry.forwardedAt?.toISOString() ?? null,
  };
  if (entry.attemptLog) {
    record.attempt_log = entry.attemptLog.map((a) => ({
      attempted_at: a.attemptedAt.toISOString(),
      status_code: a.statusCode,
      duration_ms: Math.round(a.durationMs),
      platform_response: a.platformResponse,
      note: a.note,
    }));
  }
  return record;
}

/** The entries of a page of one pixel's events, by event id: one store read. */
export async function forwardingOf(
  ctx: Pick<Context, 'store' | 'account'>,
  pixelId: string,
  events: readonly TrackedEvent[],
  withLog = false,
): Promise<Map<string, ForwardingEntry[]>> {
  if (events.length === 0) return new Map();
  return ctx.store.forwarding.eventForwarding(
    ctx.account.id,
    pixelId,
    events.map((e) => e.eventId),
    withLog,
  );
}
