/**
 * TikTok's answers. The Events API answers HTTP 200 even to refusals, with a body
 * `{code, message, request_id, data}`; `code` 0 is success. Codes as TikTok's Marketing API
 * documents them (and RudderStack's TikTok destination handles them): 40100 too many requests
 * (retry); 40001 no permission, 40102 token expired, 40104 token missing, 40105 token invalid
 * (credentials: suspend); 40002 and other 4xxxx validation errors (permanent); 5xxxx TikTok's
 * own failures (retry). 20001 is treated as success, as RudderStack does; its exact meaning
 * is not documented where we could find it, so its message is kept in the receipt.
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

const AUTH_CODES = new Set([40001, 40102, 40104, 40105]);
/**
 * 40100 too many requests; 40700 a temporary internal error (RudderStack's TikTok handler
 * retries it: rudder-transformer src/v0/destinations/tiktok_ads/networkHandler.js).
 */
const TRANSIENT_CODES = new Set([40100, 40700]);

export function classifyTiktokAnswer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  const body = parseJsonObject(answer.body);
  const code = body?.['code'];
  if (answer.status >= 200 && answer.status < 300 && typeof code === 'number') {
    const message = `TikTok code ${code}: ${String(body?.['message'] ?? '')}`;
    const requestId = body?.['request_id'];
    if (code === 0 || code === 20001) {
      return {
        kind: 'success',
        receipt: {
          code,
          ...(requestId !== undefined ? { request_id: requestId } : {}),
          ...(code !== 0 ? { message: body?.['message'] } : {}),
        },
      };
    }
    if (AUTH_CODES.has(code)) return { kind: 'auth', message };
    if (TRANSIENT_CODES.has(code) || code >= 50000) return { kind: 'transient', message };
    return { kind: 'permanent', message };
  }
  if (answer.status === 401 || answer.status === 403) {
    return { kind: 'auth', message: `HTTP ${answer.status}: ${excerpt(answer.body)}` };
  }
  return { kind: 'permanent', message: `HTTP ${answer.status}: ${excerpt(answer.body)}` };
}
