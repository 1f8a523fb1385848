/**
 * Meta's answers, classified. Meta answers 2xx with `{events_received, messages, fbtrace_id}`,
 * and 4xx/5xx with `{error: {message, type, code, error_subcode, is_transient,
 * error_user_title, error_user_msg, fbtrace_id}}` (Graph API "Handling errors";
 * Conversions API "Troubleshooting": retry non-client errors).
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

/**
 * Codes that clear by themselves: 1 unknown/temporary, 2 service unavailable, 4 app request
 * limit, 17 user request limit, 32 page request limit, 341 application limit, 368 temporarily
 * blocked, 613 calls within an hour exceeded, 80003 ads-insights style throttling, and the
 * 5000/21009 RudderStack retries too. Any error with `is_transient: true` is retried as well.
 */
const TRANSIENT_CODES = new Set([1, 2, 4, 17, 32, 341, 368, 613, 5000, 21009, 80003]);

/**
 * Codes that say the credentials are wrong, not the event: 190 invalid or expired access
 * token, 102 session invalid, 104 token missing, 10 and 200–299 permission denied. Code 100
 * with subcode 33 ("object does not exist, cannot be loaded due to missing permissions") means
 * a wrong pixel id or a token without access to it: also a destination problem.
 */
function isAuthError(code: number, subcode: number | undefined): boolean {
  return (
    code === 190 ||
    code === 102 ||
    code === 104 ||
    code === 10 ||
    (code >= 200 && code <= 299) ||
    (code === 100 && subcode === 33)
  );
}

export interface MetaError {
  code: number;
  subcode: number | undefined;
  isTransient: boolean;
  message: string;
  fbtraceId: string | undefined;
}

export function readMetaError(body: string): MetaError | null {
  const error = parseJsonObject(body)?.['error'];
  if (typeof error !== 'object' || error === null) return null;
  const e = error as Record<string, unknown>;
  if (typeof e['code'] !== 'number') return null;
  const userMessage = typeof e['error_user_msg'] === 'string' ? e['error_user_msg'] : undefined;
  const title = typeof e['error_user_title'] === 'string' ? e['error_user_title'] : undefined;
  const message = typeof e['message'] === 'string' ? e['message'] : 'no message';
  return {
    code: e['code'],
    subcode: typeof e['error_subcode'] === 'number' ? e['error_subcode'] : undefined,
    isTransient: e['is_transient'] === true,
    message: [title, userMessage ?? message].filter(Boolean).join(': '),
    fbtraceId: typeof e['fbtrace_id'] === 'string' ? e['fbtrace_id'] : undefined,
  };
}

function describe(error: MetaError): string {
  const code = error.subcode === undefined ? `${error.code}` : `${error.code}/${error.subcode}`;
  const trace = error.fbtraceId ? ` (fbtrace_id ${error.fbtraceId})` : '';
  return `Meta error ${code}: ${error.message}${trace}`;
}

export function classifyMetaAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const error = answer.kind === 'response' ? readMetaError(answer.body) : null;
  if (error) {
    if (isAuthError(error.code, error.subcode)) return { kind: 'auth', message: describe(error) };
    if (error.isTransient || TRANSIENT_CODES.has(error.code)) {
      return { kind: 'transient', message: describe(error) };
    }
  }
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  if (answer.status >= 200 && answer.status < 300) {
    const body = parseJsonObject(answer.body) ?? {};
    const receipt: Record<string, unknown> = {};
    for (const key of ['events_received', 'fbtrace_id', 'messages']) {
      if (body[key] !== undefined) receipt[key] = body[key];
    }
    return { kind: 'success', receipt };
  }
  if (error) return { kind: 'permanent', message: describe(error) };
  if (answer.status === 401 || answer.status === 403) {
    return { kind: 'auth', message: `HTTP ${answer.status}: ${excerpt(answer.body)}` };
  }
  return { kind: 'permanent', message: `HTTP ${answer.status}: ${excerpt(answer.body)}` };
}
