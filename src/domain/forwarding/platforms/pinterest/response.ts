/**
 * Pinterest's answers (Conversions API v5, developers.pinterest.com/docs/api/v5/events-create):
 * - 200 `{num_events_received, num_events_processed, events: [{status, error_message}]}`;
 * - 422 when not every event was processed (e.g. code 953, an event too far in the past):
 *   Pinterest names the event in `details.events[]` (its `error_message` joins the verdict's
 *   message), but keeps none of the request, so the request is bisected like Meta's
 *   (batch-isolation.ts) and the bad event alone `failed`;
 * - 400 (code 4196) a bad request: permanent;
 * - 401 (code 2) authentication failed, 403 (code 29) not permitted: suspend;
 * - 429 (code 8) throttled, honouring `Retry-After`; 5xx (503 code 4197): retry.
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

export function classifyPinterestAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  const body = parseJsonObject(answer.body);
  if (answer.status >= 200 && answer.status < 300) {
    return {
      kind: 'success',
      receipt: {
        num_events_received: body?.['num_events_received'],
        num_events_processed: body?.['num_events_processed'],
      },
    };
  }
  const code = body?.['code'];
  // A 422 names each refused event's reason in `details.events[]`: the ledger says why.
  const events = (body?.['details'] as { events?: unknown } | undefined)?.events;
  const reasons = Array.isArray(events)
    ? events.flatMap((e) => {
        const text = (e as Record<string, unknown> | null)?.['error_message'];
        return typeof text === 'string' ? [text] : [];
      })
    : [];
  const said = typeof body?.['message'] === 'string' ? String(body['message']) : answer.body;
  const message = `Pinterest HTTP ${answer.status}${typeof code === 'number' ? ` code ${code}` : ''}: ${excerpt(
    reasons.length > 0 ? `${said} ${[...new Set(reasons)].join('; ')}` : said,
  )}`;
  if (answer.status === 401 || answer.status === 403) return { kind: 'auth', message };
  return { kind: 'permanent', message };
}
