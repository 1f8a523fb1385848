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
