/**
 * Google's answers (Data Manager API; developers.google.com/data-manager/api/devguides/concepts/
 * understand-errors): `200 {requestId}` on success; otherwise Google's error model
 * `{error: {code, message, status, details: [ErrorInfo {reason}, BadRequest {fieldViolations}
 * …]}}`. There is no partial failure: one invalid event fails the whole request, so a 400 is
 * `permanent` and bisected (batch-isolation.ts) until the bad event is alone. 401
 * UNAUTHENTICATED reaches this only after the engine renewed the token and sent once more, and
 * 403 PERMISSION_DENIED (no access to the customer, or no such conversion action) is the
 * configuration's: both suspend. 429 RESOURCE_EXHAUSTED, 5xx (UNAVAILABLE, DEADLINE_EXCEEDED)
 * and no answer: retried with backoff (Google's client retries only those).
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

/** `status: message (reasons; field: description)` from Google's error body, or null. */
export function googleErrorText(body: string): string | null {
  const error = parseJsonObject(body)?.['error'];
  if (typeof error !== 'object' || error === null) return null;
  const e = error as { message?: unknown; status?: unknown; details?: unknown };
  const reasons: string[] = [];
  for (const detail of Array.isArray(e.details) ? e.details : []) {
    const d = detail as { reason?: unknown; fieldViolations?: unknown };
    if (typeof d.reason === 'string') reasons.push(d.reason);
    for (const v of Array.isArray(d.fieldViolations) ? d.fieldViolations : []) {
      const violation = v as { field?: unknown; description?: unknown };
      if (typeof violation.field === 'string') {
        reasons.push(`${violation.field}: ${String(violation.description ?? 'invalid')}`);
      }
    }
  }
  const head = [e.status, e.message].filter((x) => typeof x === 'string').join(': ');
  return reasons.length > 0 ? `${head} (${reasons.join('; ')})` : head;
}

export function classifyGoogleAdsAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  if (answer.status >= 200 && answer.status < 300) {
    const requestId = parseJsonObject(answer.body)?.['requestId'];
    return { kind: 'success', receipt: requestId !== undefined ? { requestId } : {} };
  }
  const message = `Google Ads HTTP ${answer.status}: ${googleErrorText(answer.body) ?? excerpt(answer.body)}`;
  if (answer.status === 401 || answer.status === 403) return { kind: 'auth', message };
  return { kind: 'permanent', message };
}
