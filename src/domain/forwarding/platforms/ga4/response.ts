/**
 * GA4's answers. The Measurement Protocol "always returns a 2xx status code if the HTTP
 * request was received" and gives no error for malformed or unprocessed data
 * (protocol/ga4/reference); so a 2xx is all there is to a success, and only the validation
 * server (`/debug/mp/collect`, used by the test send) says what is wrong.
 */
import {
  excerpt,
  httpVerdict,
  type PlatformAnswer,
  parseJsonObject,
  type Verdict,
} from '../../platform-response.ts';

export interface Ga4ValidationMessage {
  fieldPath: string;
  description: string;
  validationCode: string;
}

export function classifyGa4Answer(answer: PlatformAnswer, now: Date): Verdict {
  const generic = httpVerdict(answer, now);
  if (generic) return generic;
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  if (answer.status >= 200 && answer.status < 300) {
    // Only the validation server (the test send) answers with a body; its messages are what
    // GA4's collect endpoint would have dropped the event for, silently.
    const messages = readGa4ValidationMessages(answer.body);
    if (messages && messages.length > 0) {
      return {
        kind: 'permanent',
        message: messages
          .map((m) => `${m.fieldPath}: ${m.description} (${m.validationCode})`)
          .join('; '),
      };
    }
    return { kind: 'success', receipt: { status_code: answer.status } };
  }
  if (answer.status === 401 || answer.status === 403) {
    return { kind: 'auth', message: `HTTP ${answer.status}: ${excerpt(answer.body)}` };
  }
  return { kind: 'permanent', message: `HTTP ${answer.status}: ${excerpt(answer.body)}` };
}

/** The validation server's `validationMessages`, or null when the body is not its answer. */
export function readGa4ValidationMessages(body: string): Ga4ValidationMessage[] | null {
  const messages = parseJsonObject(body)?.['validationMessages'];
  if (!Array.isArray(messages)) return null;
  return messages
    .filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null)
    .map((m) => ({
      fieldPath: String(m['fieldPath'] ?? ''),
      description: String(m['description'] ?? ''),
      validationCode: String(m['validationCode'] ?? ''),
    }));
}
