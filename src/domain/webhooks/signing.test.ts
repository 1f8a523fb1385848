import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  newWebhookSecret,
  signingSecrets,
  signPayload,
  standardWebhookHeaders,
  standardWebhookSignature,
  verifyPayloadSignature,
} from './signing.ts';

describe('webhook signing', () => {
  it("matches GitHub's published X-Hub-Signature-256 example", () => {
    // docs.github.com "Validating webhook deliveries": secret and payload from the example.
    assert.equal(
      signPayload("It's a Secret to Everybody", 'Hello, World!'),
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
  });

  it("matches the Standard Webhooks specification's test vector", () => {
    // standard-webhooks/standard-webhooks: the vector every reference library tests against.
    assert.equal(
      standardWebhookSignature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('signs with every secret during a rotation', () => {
    const headers = standardWebhookHeaders(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', newWebhookSecret()],
      'msg_1',
      1,
      '{}',
    );
    assert.equal(headers['webhook-id'], 'msg_1');
    assert.equal(headers['webhook-timestamp'], '1');
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
  });

  it('verifies in constant time and refuses anything else', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"event":"event.tracked"}';
    const good = signPayload(secret, body);
    assert.equal(verifyPayloadSignature(secret, body, good), true);
    const flipped = good.slice(0, -1) + (good.endsWith('0') ? '1' : '0');
    for (const bad of [
      flipped,
      good.slice(7),
      good.slice(0, -2),
      '',
      'sha256=zz',
      signPayload('whsec_other', body),
    ]) {
      assert.equal(verifyPayloadSignature(secret, body, bad), false, bad);
    }
    assert.equal(verifyPayloadSignature(secret, `${body} `, good), false);
  });
});

describe('which secrets sign (contract §6)', () => {
  const rotatedAt = new Date('2026-11-25T00:00:00Z');
  const expires = new Date(rotatedAt.getTime() + 24 * 3600_000);
  const rotated = {
    secret: 'whsec_new',
    previousSecret: 'whsec_old',
    previousSecretExpiresAt: expires,
  };

  it('signs with the only secret when there was no rotation', () => {
    assert.deepEqual(
      signingSecrets(
        { secret: 'whsec_a', previousSecret: null, previousSecretExpiresAt: null },
        rotatedAt,
      ),
      { serviceSignature: 'whsec_a', standardWebhooks: ['whsec_a'] },
    );
  });

  it('keeps X-Service-Signature on the old secret during the overlap, both in webhook-signature', () => {
    assert.deepEqual(signingSecrets(rotated, rotatedAt), {
      serviceSignature: 'whsec_old',
      standardWebhooks: ['whsec_new', 'whsec_old'],
    });
    assert.deepEqual(signingSecrets(rotated, new Date(expires.getTime() - 1)), {
      serviceSignature: 'whsec_old',
      standardWebhooks: ['whsec_new', 'whsec_old'],
    });
  });

  it('switches to the new secret alone when the overlap ends', () => {
    for (const at of [expires, new Date(expires.getTime() + 1)]) {
      assert.deepEqual(signingSecrets(rotated, at), {
        serviceSignature: 'whsec_new',
        standardWebhooks: ['whsec_new'],
      });
    }
  });
});
