/**
 * The shared webhook vectors (clients/webhook-vectors.json), which every Trackway client's tests
 * read: the Node client must give each vector's expected outcome, and the vectors' signatures
 * must be the ones the server's own signing code makes, so no client is tested against a
 * scheme the server does not use.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { signPayload, standardWebhookSignature } from '../../../src/domain/webhooks/signing.ts';
import { verifyWebhook, WebhookVerificationError } from '../src/index.ts';

interface Vector {
  name: string;
  body: string;
  headers: Record<string, string>;
  secrets: string[];
  now: number;
  expect: string;
}
const file = JSON.parse(
  readFileSync(new URL('../../../clients/webhook-vectors.json', import.meta.url), 'utf8'),
) as { tolerance_seconds: number; vectors: Vector[] };

describe('shared webhook vectors', () => {
  for (const vector of file.vectors) {
    it(vector.name, async () => {
      const run = verifyWebhook(vector.body, vector.headers, vector.secrets, {
        now: new Date(vector.now * 1000),
        toleranceSeconds: file.tolerance_seconds,
      });
      if (vector.expect === 'ok') {
        assert.deepEqual(await run, JSON.parse(vector.body));
      } else {
        await assert.rejects(
          run,
          (error: unknown) =>
            error instanceof WebhookVerificationError && error.code === vector.expect,
        );
      }
    });
  }

  it('signs its valid vectors exactly as the server does', () => {
    const valid = file.vectors.find((v) => v.name === 'valid')!;
    const [secret] = valid.secrets as [string];
    const id = valid.headers['webhook-id']!;
    const ts = Number(valid.headers['webhook-timestamp']);
    assert.equal(
      valid.headers['webhook-signature'],
      standardWebhookSignature(secret, id, ts, valid.body),
    );
    assert.equal(valid.headers['X-Service-Signature'], signPayload(secret, valid.body));
  });
});
