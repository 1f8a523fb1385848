/**
 * verifyWebhook() against signatures made by the server's own signing code (the same functions
 * the delivery worker calls). Real deliveries are checked in client.process.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  newWebhookSecret,
  signPayload,
  standardWebhookHeaders,
} from '../../../src/domain/webhooks/signing.ts';
import { verifyWebhook, WebhookVerificationError } from '../src/index.ts';

const secret = newWebhookSecret();
const body = JSON.stringify({
  id: 'msg_01JDQ3Z8K4X7V2N9P5R6T8W1Y3',
  event: 'event.tracked',
  data: { pixel_id: 'px_1', event_name: 'Purchase', event_id: 'e1', value: 5, timestamp: 'x' },
  webhook_id: 'wh_1',
  timestamp: new Date().toISOString(),
});
const now = Math.floor(Date.now() / 1000);

function delivery(secrets: string[], at = now, payload = body) {
  return {
    ...standardWebhookHeaders(secrets, 'msg_01JDQ3Z8K4X7V2N9P5R6T8W1Y3', at, payload),
    'x-service-signature': signPayload(secrets[0]!, payload),
  };
}

const refused = (code: string) => (error: unknown) =>
  error instanceof WebhookVerificationError && error.code === code;

describe('verifyWebhook', () => {
  it('returns the typed payload of a genuine delivery (Node headers or Fetch Headers)', async () => {
    const payload = await verifyWebhook(body, delivery([secret]), [secret]);
    assert.equal(payload.event, 'event.tracked');
    if (payload.event === 'event.tracked') assert.equal(payload.data.event_name, 'Purchase');
    const headers = new Headers(delivery([secret]));
    assert.equal((await verifyWebhook(Buffer.from(body), headers, secret)).id, JSON.parse(body).id);
  });

  it('accepts either secret while a rotation overlaps (two webhook-signature entries)', async () => {
    const next = newWebhookSecret();
    const headers = delivery([next, secret]);
    await verifyWebhook(body, headers, [next]);
    await verifyWebhook(body, headers, [secret]);
  });

  it('refuses a tampered body, a wrong secret and a missing signature', async () => {
    await assert.rejects(
      verifyWebhook(body.replace('"value":5', '"value":500'), delivery([secret]), [secret]),
      refused('invalid_signature'),
    );
    await assert.rejects(
      verifyWebhook(body, delivery([secret]), [newWebhookSecret()]),
      refused('invalid_signature'),
    );
    await assert.rejects(
      verifyWebhook(body, { 'content-type': 'application/json' }, [secret]),
      refused('missing_signature'),
    );
  });

  it('refuses a timestamp more than 5 minutes away, either way (replay protection)', async () => {
    // The check runs against a fixed `now`, so a busy machine cannot push 299 s past 300.
    const at = { now: new Date(now * 1000) };
    await assert.rejects(
      verifyWebhook(body, delivery([secret], now - 301), [secret], at),
      refused('timestamp_out_of_tolerance'),
    );
    await assert.rejects(
      verifyWebhook(body, delivery([secret], now + 301), [secret], at),
      refused('timestamp_out_of_tolerance'),
    );
    await verifyWebhook(body, delivery([secret], now - 299), [secret], at);
    // A replay cannot move the timestamp: the signature covers it.
    const old = delivery([secret], now - 3600);
    await assert.rejects(
      verifyWebhook(body, { ...old, 'webhook-timestamp': String(now) }, [secret]),
      refused('invalid_signature'),
    );
  });

  it('falls back to X-Service-Signature only when the Standard Webhooks headers are absent', async () => {
    const only = { 'x-service-signature': signPayload(secret, body) };
    assert.equal(
      (await verifyWebhook(body, only, [newWebhookSecret(), secret])).event,
      'event.tracked',
    );
    await assert.rejects(verifyWebhook(`${body} `, only, [secret]), refused('invalid_signature'));
    // A bad webhook-signature is not rescued by a good X-Service-Signature.
    const mixed = {
      ...delivery([newWebhookSecret()]),
      'x-service-signature': only['x-service-signature'],
    };
    await assert.rejects(verifyWebhook(body, mixed, [secret]), refused('invalid_signature'));
  });
});
