/**
 * What a platform answered, in the engine's terms. Each platform's classifier turns a raw
 * answer into one `Verdict`:
 * - `success`: forwarded; `receipt` is what identifies it on the platform's side (it becomes
 *   `platform_response` in `event.forwarded`); `refused` lists, by their index in the request,
 *   events the platform refused while it took the others (Microsoft's per-event validation
 *   errors): those are `failed` with the message, the rest forwarded;
 * - `transient`: retry on the schedule while the event is inside the platform's window;
 * - `permanent`: the platform refused the content: `failed`, with the platform's message;
 * - `auth`: the platform refused the credentials: suspend the destination, keep its events.
 */
export type PlatformAnswer =
  | { kind: 'response'; status: number; body: string; retryAfter?: string | undefined }
  /** No answer: connection refused or reset, DNS failure, timeout. */
  | { kind: 'network'; message: string };

export type Verdict =
  | {
      kind: 'success';
      receipt: Record<string, unknown>;
      refused?: ReadonlyArray<{ index: number; message: string }>;
    }
  | { kind: 'transient'; message: string; retryAfterMs?: number }
  | { kind: 'permanent'; message: string }
  | { kind: 'auth'; message: string };

/** The first 1 KB of an answer: what the attempt ledger keeps (contract §12). */
export function excerpt(body: string): string {
  return body.length <= 1024 ? body : body.slice(0, 1024);
}

export function parseJsonObject(body: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** `Retry-After` in seconds or as an HTTP date, in ms from `now`; undefined when absent/bad. */
export function retryAfterMs(header: string | undefined, now: Date): number | undefined {
  if (header === undefined) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** The verdict for answers no platform-specific reading is needed for, or null. */
export function httpVerdict(answer: PlatformAnswer, now: Date): Verdict | null {
  if (answer.kind === 'network') return { kind: 'transient', message: answer.message };
  if (answer.status === 429 || answer.status >= 500) {
    const wait = retryAfterMs(answer.retryAfter, now);
    return {
      kind: 'transient',
      message: `HTTP ${answer.status}: ${excerpt(answer.body)}`,
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    };
  }
  return null;
}
