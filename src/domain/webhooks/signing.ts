/**
 * Webhook signatures. `X-Service-Signature` is the spec's: `sha256=` + hex HMAC-SHA256 of the
 * exact body bytes, keyed with the UTF-8 bytes of the whole secret string (as GitHub does).
 * The Standard Webhooks headers ride beside it so receivers can use that ecosystem's libraries.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function signPayload(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of an `X-Service-Signature` value; false for anything malformed. */
export function verifyPayloadSignature(
  secret: string,
  body: string | Uint8Array,
  header: string,
): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = Buffer.from(signPayload(secret, body));
  const received = Buffer.from(header);
  return expected.length === received.length && timingSafeEqual(expected, received);
}

/** Standard Webhooks: the key is the base64 after `whsec_`; the signed content is `id.ts.body`. */
export function standardWebhookSignature(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key)
    .update(`${messageId}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
  return `v1,${mac}`;
}

/** One signature per secret: during a rotation both the new and the old secret sign. */
export function standardWebhookHeaders(
  secrets: string[],
  messageId: string,
  timestampSeconds: number,
  body: string | Uint8Array,
) {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets
      .map((secret) => standardWebhookSignature(secret, messageId, timestampSeconds, body))
      .join(' '),
  };
}

/** The secrets an endpoint's rotation state asks for, at one moment. */
export interface SigningSecrets {
  /** `X-Service-Signature` holds one value: the old secret while it overlaps, then the new. */
  serviceSignature: string;
  /** `webhook-signature` holds one entry per secret: the new one first, then the old. */
  standardWebhooks: string[];
}

/**
 * Which secrets sign a request sent `at` (contract §6). During a rotation's overlap the old
 * secret keeps `X-Service-Signature`, so a receiver that has not yet deployed the new one keeps
 * working, and the Standard Webhooks header carries both; when the overlap ends only the new
 * secret signs.
 */
export function signingSecrets(
  endpoint: {
    secret: string;
    previousSecret: string | null;
    previousSecretExpiresAt: Date | null;
  },
  at: Date,
): SigningSecrets {
  const previous =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt.getTime() > at.getTime()
      ? endpoint.previousSecret
      : null;
  if (previous === null) {
    return { serviceSignature: endpoint.secret, standardWebhooks: [endpoint.secret] };
  }
  return { serviceSignature: previous, standardWebhooks: [endpoint.secret, previous] };
}
