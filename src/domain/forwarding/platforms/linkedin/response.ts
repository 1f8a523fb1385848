/**
 * LinkedIn's answers (Rest.li BATCH_CREATE; learn.microsoft.com/en-us/linkedin/shared/
 * api-guide/concepts/methods#batch-create): a request LinkedIn reads answers 200 with one
 * result per element, in order, `{elements: [{status: 201} | {status: 4xx, error: {message}}]}`;
 * a request it cannot read at all answers 400 or 422 (a missing `userIds`) with `{status,
 * message, code?}`. Either way one element's refusal is not all the events': the request is
 * `permanent` and bisected (batch-isolation.ts) until the bad event is alone, and the accepted
 * ones sent again are deduplicated by LinkedIn on `eventId` (docs/decisions.md). 401 reaches
 * this only after the engine renewed the token and sent once more: with 403 (no role on the ad
 * account) and 426 (the version sunset) it suspends the destination. 429 and 5xx are retried.
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

function elementFailures(body: Record<string, unknown> | null): string | null {
  const elements = body?.['elements'];
  if (!Array.isArray(elements)) return null;
  const failed = elements.flatMap((e, i) => {
    const status = Number((e as { status?: unknown })?.status);
    if (status >= 200 && status < 300) return [];
    const error = (e as { error?: { message?: unknown } })?.error;
    return [`element ${i}: ${String(error?.message ?? `status ${status}`)}`];
  });
  return failed.length > 0 ? failed.join('; ') : null;
}

export function classifyLinkedinAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  const body = parseJsonObject(answer.body);
  if (answer.status >= 200 && answer.status < 300) {
    const failed = elementFailures(body);
    if (failed === null) return { kind: 'success', receipt: {} };
    return { kind: 'permanent', message: `LinkedIn refused events: ${failed}` };
  }
  const text = typeof body?.['message'] === 'string' ? body['message'] : excerpt(answer.body);
  const message = `LinkedIn HTTP ${answer.status}: ${text}`;
  if (answer.status === 401 || answer.status === 403 || answer.status === 426) {
    return { kind: 'auth', message };
  }
  return { kind: 'permanent', message };
}
