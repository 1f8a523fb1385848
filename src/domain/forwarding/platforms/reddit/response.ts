/**
 * Reddit's answers (Conversions API v3; RudderStack's reddit networkHandler): a 2xx may list
 * `invalid_events: [{event_index, error_message}]`, a 400 carries the same for a refused
 * request. Either way the request's outcome is not the same for all its events, so it is
 * `permanent` and bisected (batch-isolation.ts) until the bad event is alone, and the others
 * are resent (Reddit deduplicates on `conversion_id`). 401 (`UNAUTHORIZED`) and 403 refuse the
 * credentials (a conversion token cannot be refreshed): suspend. 429 and 5xx: retried,
 * honouring `Retry-After` (docs/decisions.md).
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

function invalidEvents(body: Record<string, unknown> | null): string | null {
  const invalid = body?.['invalid_events'];
  if (!Array.isArray(invalid) || invalid.length === 0) return null;
  return invalid
    .map((e) => String((e as Record<string, unknown>)?.['error_message'] ?? 'invalid event'))
    .join('; ');
}

export function classifyRedditAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  const body = parseJsonObject(answer.body);
  const invalid = invalidEvents(body);
  if (answer.status >= 200 && answer.status < 300) {
    if (invalid === null) {
      return {
        kind: 'success',
        receipt: body?.['message'] !== undefined ? { message: body['message'] } : {},
      };
    }
    return { kind: 'permanent', message: `Reddit refused events: ${invalid}` };
  }
  const message = `Reddit HTTP ${answer.status}: ${invalid ?? excerpt(answer.body)}`;
  if (answer.status === 401 || answer.status === 403) return { kind: 'auth', message };
  return { kind: 'permanent', message };
}
