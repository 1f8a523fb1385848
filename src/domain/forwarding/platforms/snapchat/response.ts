/**
 * Snapchat's answers (Conversions API v3, developers.snap.com/api/marketing-api/
 * Conversions-API): 200 `{status: "VALID"}`; 400 `{status: "INVALID", reason, event?}` for a
 * missing field, an out-of-range timestamp, unhashed or too little PII, which refuses the
 * request: permanent, and bisected to the bad event (batch-isolation.ts). Snap documents no
 * auth or throttling codes (platforms.md §6.3): 401/403 refuse the credentials (suspend),
 * 429 and 5xx are retried, honouring `Retry-After` (docs/decisions.md).
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

export function classifySnapchatAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  const body = parseJsonObject(answer.body);
  const status = body?.['status'];
  if (answer.status >= 200 && answer.status < 300 && status !== 'INVALID') {
    return {
      kind: 'success',
      receipt: { status, ...(body?.['test_event'] ? { test_event: true } : {}) },
    };
  }
  const reason = typeof body?.['reason'] === 'string' ? body['reason'] : excerpt(answer.body);
  const message = `Snapchat HTTP ${answer.status}: ${reason}`;
  if (answer.status === 401 || answer.status === 403) return { kind: 'auth', message };
  return { kind: 'permanent', message };
}
