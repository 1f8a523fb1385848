/**
 * Microsoft's answers (UET Conversions API; Segment's ms-bing-capi types):
 * - 2xx `{eventsReceived, error?: {code, message, details: [{index, propertyName,
 *   attemptedValue, errorMessage, isWarning?}]}, traceId}`: with `continueOnValidationError`
 *   the valid events are ingested and the invalid ones listed by their index in `data`, so
 *   each listed event is refused (`permanent`, with Microsoft's message) and the others are
 *   forwarded; a detail marked `isWarning` refuses nothing;
 * - 401 `{error: {code: "Unauthorized", message}, traceId}` (and 403): the token or tag is
 *   refused: suspend;
 * - 429 and 5xx: retried, honouring `Retry-After` (not documented: docs/decisions.md);
 * - another 4xx refuses the request as a whole: bisected (`subRequest`) to the bad event.
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

interface Detail {
  index: number;
  message: string;
}

function details(error: Record<string, unknown> | null): Detail[] {
  const list = error?.['details'];
  if (!Array.isArray(list)) return [];
  const out: Detail[] = [];
  for (const entry of list) {
    if (typeof entry !== 'object' || entry === null) continue;
    const d = entry as Record<string, unknown>;
    if (d['isWarning'] === true || !Number.isInteger(d['index'])) continue;
    const property = typeof d['propertyName'] === 'string' ? `${d['propertyName']}: ` : '';
    const text = typeof d['errorMessage'] === 'string' ? d['errorMessage'] : 'invalid event';
    out.push({
      index: d['index'] as number,
      message: `Microsoft refused the event: ${property}${text}`,
    });
  }
  return out;
}

export function classifyMicrosoftAdsAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  const body = parseJsonObject(answer.body);
  const error = (body?.['error'] ?? null) as Record<string, unknown> | null;
  if (answer.status >= 200 && answer.status < 300) {
    const receipt: Record<string, unknown> = {};
    if (body?.['eventsReceived'] !== undefined) receipt['eventsReceived'] = body['eventsReceived'];
    if (body?.['traceId'] !== undefined) receipt['traceId'] = body['traceId'];
    const refused = details(error);
    return { kind: 'success', receipt, ...(refused.length > 0 ? { refused } : {}) };
  }
  const said =
    typeof error?.['message'] === 'string'
      ? `${String(error['code'] ?? 'error')}: ${error['message']}`
      : excerpt(answer.body);
  const message = `Microsoft HTTP ${answer.status}: ${said}`;
  if (answer.status === 401 || answer.status === 403) return { kind: 'auth', message };
  return { kind: 'permanent', message };
}
