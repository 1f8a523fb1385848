/**
 * verifyWebhook(): proof that a delivery came from Trackway, was not altered, and is not an old
 * message replayed. Web Crypto only (`crypto.subtle`, global in Node 20, Deno, Bun, browsers and
 * edge workers), so it runs wherever the client does; `subtle.verify` compares in constant time.
 */
import { WebhookVerificationError } from './errors.ts';
import type { WebhookPayload } from './types.ts';

/** A Fetch `Headers`, or Node's `IncomingHttpHeaders` (any key case). */
export type HeadersLike =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way. Default 300 s (5 minutes). */
  toleranceSeconds?: number;
  /** The time to check against; default now. */
  now?: Date;
}

const encoder = new TextEncoder();

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(body);
  // A copy: the caller's view may sit on a SharedArrayBuffer or a larger pool.
  return new Uint8Array(body instanceof Uint8Array ? body : new Uint8Array(body));
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(text);
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function fromHex(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(text)) return undefined;
  return Uint8Array.from(text.match(/../g)!, (byte) => Number.parseInt(byte, 16));
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function hmacKey(raw: Uint8Array<ArrayBuffer>) {
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

async function anyVerifies(
  keys: Uint8Array<ArrayBuffer>[],
  signatures: Uint8Array<ArrayBuffer>[],
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  for (const raw of keys) {
    const key = await hmacKey(raw);
    for (const signature of signatures) {
      if (await crypto.subtle.verify('HMAC', key, signature, data)) {
        return true;
      }
    }
  }
  return false;
}

/**
 * Checks a delivery against each of `secrets` (pass both while a rotation overlaps) and returns
 * the typed payload; throws {@link WebhookVerificationError} otherwise.
 *
 * With the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
 * which Trackway always sends, the signature covers the message id and the timestamp too, and a
 * timestamp more than 5 minutes from now is refused: a captured delivery cannot be replayed
 * later. Only without them is `X-Service-Signature` (body only, no replay protection) used.
 *
 * `rawBody` must be the exact bytes received, before any JSON parsing.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<WebhookPayload> {
  const body = bytesOf(rawBody);
  const candidates = (typeof secrets === 'string' ? [secrets] : [...secrets]).filter(Boolean);
  if (candidates.length === 0) throw new TypeError('verifyWebhook: no secret given');

  const standard = header(headers, 'webhook-signature');
  const service = header(headers, 'x-service-signature');
  let verified: boolean;
  if (standard !== undefined) {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    if (id === undefined || timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) {
      throw new WebhookVerificationError(
        'invalid_timestamp',
        'webhook-id and a numeric webhook-timestamp must accompany webhook-signature',
      );
    }
    const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
    const tolerance = options.toleranceSeconds ?? 300;
    if (Math.abs(now - Number(timestamp)) > tolerance) {
      throw new WebhookVerificationError(
        'timestamp_out_of_tolerance',
        `webhook-timestamp is more than ${tolerance} s from now: refused as a possible replay`,
      );
    }
    const signatures = standard
      .split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .map((entry) => fromBase64(entry.slice(3)))
      .filter((s) => s !== undefined);
    // The Standard Webhooks key is the base64 after `whsec_`.
    const keys = candidates
      .map((secret) => fromBase64(secret.replace(/^whsec_/, '')))
      .filter((k): k is Uint8Array<ArrayBuffer> => k !== undefined && k.length > 0);
    verified = await anyVerifies(
      keys,
      signatures,
      concat(encoder.encode(`${id}.${timestamp}.`), body),
    );
  } else if (service !== undefined) {
    const signature = service.startsWith('sha256=') ? fromHex(service.slice(7)) : undefined;
    // X-Service-Signature is keyed with the whole secret string, `whsec_` included.
    verified =
      signature !== undefined &&
      (await anyVerifies(
        candidates.map((secret) => encoder.encode(secret)),
        [signature],
        body,
      ));
  } else {
    throw new WebhookVerificationError(
      'missing_signature',
      'No webhook-signature or X-Service-Signature header',
    );
  }
  if (!verified) {
    throw new WebhookVerificationError(
      'invalid_signature',
      'The signature matches none of the given secrets',
    );
  }
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookPayload;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signed body is not JSON');
  }
}
