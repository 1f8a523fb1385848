import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

// Covers the registration routes (create, list, get, update, delete, rotate-secret, deliveries,
// retry, test): they share one fixture.
for (const kind of await testStores()) {
  describe(`webhook registration [${kind.name}]`, () => {
    let h: Harness;
    let strict: Harness;
    let acme: TestAccount;
    let other: TestAccount;

    before(async () => {
      h = await startHarness(kind);
      strict = await startHarness(kind, {
        destinations: { allowPrivate: false, allowHttp: false },
      });
      acme = await h.account('pro');
      other = await h.account('pro');
    });
    after(async () => {
      await h.close();
      await strict.close();
    });

    const create = (owner: TestAccount, payload: Record<string, unknown>) =>
      h.request(owner, { method: 'POST', url: '/v1/webhooks', payload });

    it('registers an endpoint: 201, all five kinds by default, the secret shown once', async () => {
      const res = await create(acme, { url: 'http://127.0.0.1:9/hooks', description: 'Orders' });
      assert.equal(res.statusCode, 201);
      const webhook = res.json();
      assert.match(webhook.id, /^wh_[0-9A-Za-z]{16}$/);
      assert.match(webhook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(webhook.events, [
        'event.tracked',
        'event.forwarded',
        'pixel.created',
        'pixel.updated',
        'subscription.updated',
      ]);
      assert.equal(webhook.enabled, true);
      assert.equal(webhook.previous_secret_expires_at, null);
      assert.equal(webhook.description, 'Orders');
      const got = await h.request(acme, { method: 'GET', url: `/v1/webhooks/${webhook.id}` });
      assert.equal(got.json().secret, undefined);
      const { secret: _secret, ...withoutSecret } = webhook;
      assert.deepEqual(got.json(), withoutSecret);
      const list = await h.request(acme, { method: 'GET', url: '/v1/webhooks' });
      assert.equal(list.json().webhooks.length, 1);
      assert.equal(list.json().webhooks[0].secret, undefined);
    });

    it('refuses query parameters on routes that take none', async () => {
      const made = (await create(acme, { url: 'http://127.0.0.1:9/q' })).json();
      for (const url of [
        '/v1/webhooks?limit=1',
        `/v1/webhooks/${made.id}?expand=secret`,
        `/v1/pixels/px_0000000000000000?x=1`,
      ]) {
        const res = await h.request(acme, { method: 'GET', url });
        assert.equal(res.statusCode, 400, url);
        const name = url.split('?')[1]!.split('=')[0];
        assert.deepEqual(res.json(), {
          error: 'Invalid request',
          message: `Unknown parameter: ${name}`,
          field: name,
        });
      }
      await h.request(acme, { method: 'DELETE', url: `/v1/webhooks/${made.id}` });
    });

    it('validates events and urls, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{}, 'Missing required field: url'],
        [
          { url: 'http://127.0.0.1:9/', events: ['event.deleted'] },
          'Invalid field: events.0 must be one of: event.tracked, event.forwarded, pixel.created, pixel.updated, subscription.updated',
        ],
        [
          { url: 'http://127.0.0.1:9/', events: [] },
          'Invalid field: events must have at least 1 item',
        ],
        [{ url: 'http://127.0.0.1:9/', secret: 'mine' }, 'Unknown field: secret'],
        [{ url: 'not a url' }, 'Invalid field: url must be an absolute URL'],
      ];
      for (const [payload, message] of cases) {
        const res = await create(acme, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(res.json().message, message);
      }
    });

    it('refuses private destinations and plain http unless configured', async () => {
      const owner = await strict.account('pro');
      const cases: Array<[string, string]> = [
        ['https://127.0.0.1/hooks', 'Invalid field: url must resolve to a public address'],
        ['https://10.1.2.3/hooks', 'Invalid field: url must resolve to a public address'],
        [
          'https://[::ffff:169.254.169.254]/latest/meta-data',
          'Invalid field: url must resolve to a public address',
        ],
        ['https://localhost:8443/hooks', 'Invalid field: url must resolve to a public address'],
        ['http://93.184.216.34/hooks', 'Invalid field: url must use https'],
      ];
      for (const [url, message] of cases) {
        const res = await strict.request(owner, {
          method: 'POST',
          url: '/v1/webhooks',
          payload: { url },
        });
        assert.equal(res.statusCode, 400, url);
        assert.deepEqual(res.json(), { error: 'Invalid request', message, field: 'url' });
      }
      const ok = await strict.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'https://93.184.216.34/hooks' },
      });
      assert.equal(ok.statusCode, 201);
      const patch = await strict.request(owner, {
        method: 'PATCH',
        url: `/v1/webhooks/${ok.json().id}`,
        payload: { url: 'https://192.168.1.1/' },
      });
      assert.equal(patch.statusCode, 400);
    });

    it('caps endpoints at 16 an account: the 17th is 403 Subscription limit exceeded', async () => {
      const owner = await h.account('enterprise');
      const made = await Promise.all(
        Array.from({ length: 16 }, (_, i) => create(owner, { url: `http://127.0.0.1:9/cap${i}` })),
      );
      assert.deepEqual(
        made.map((r) => r.statusCode),
        Array(16).fill(201),
      );
      const over = await create(owner, { url: 'http://127.0.0.1:9/cap16' });
      assert.equal(over.statusCode, 403);
      assert.deepEqual(over.json(), {
        error: 'Forbidden',
        message: 'Subscription limit exceeded: an account may have 16 webhook endpoints',
      });
      // Another account is not affected; a deleted endpoint frees its place.
      assert.equal((await create(other, { url: 'http://127.0.0.1:9/cap-other' })).statusCode, 201);
      const first = made[0]!.json().id;
      await h.request(owner, { method: 'DELETE', url: `/v1/webhooks/${first}` });
      assert.equal((await create(owner, { url: 'http://127.0.0.1:9/cap17' })).statusCode, 201);
    });

    it('updates, rotates and deletes', async () => {
      const { id, secret } = (
        await create(acme, { url: 'http://127.0.0.1:9/a', events: ['pixel.created'] })
      ).json();
      const patched = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/webhooks/${id}`,
        payload: {
          events: ['event.tracked', 'pixel.updated'],
          enabled: false,
          description: 'Paused',
        },
      });
      assert.equal(patched.statusCode, 200);
      assert.deepEqual(patched.json().events, ['event.tracked', 'pixel.updated']);
      assert.equal(patched.json().enabled, false);
      const rotated = await h.request(acme, {
        method: 'POST',
        url: `/v1/webhooks/${id}/rotate-secret`,
      });
      assert.equal(rotated.statusCode, 200);
      assert.notEqual(rotated.json().secret, secret);
      assert.match(rotated.json().secret, /^whsec_/);
      const overlapEnds = new Date(h.clock.now().getTime() + 24 * 3600_000).toISOString();
      assert.equal(rotated.json().previous_secret_expires_at, overlapEnds);
      const shown = await h.request(acme, { method: 'GET', url: `/v1/webhooks/${id}` });
      assert.equal(shown.json().previous_secret_expires_at, overlapEnds);
      const deleted = await h.request(acme, { method: 'DELETE', url: `/v1/webhooks/${id}` });
      assert.deepEqual(deleted.json(), { id, deleted: true });
      const gone = await h.request(acme, { method: 'GET', url: `/v1/webhooks/${id}` });
      assert.equal(gone.statusCode, 404);
      assert.deepEqual(gone.json(), { error: 'Not found', message: `Webhook not found: ${id}` });
    });

    it("is 404 on every route for another account's webhook", async () => {
      const theirs = (await create(other, { url: 'http://127.0.0.1:9/theirs' })).json().id;
      const routes = [
        { method: 'GET' as const, url: `/v1/webhooks/${theirs}` },
        { method: 'PATCH' as const, url: `/v1/webhooks/${theirs}`, payload: { enabled: false } },
        { method: 'DELETE' as const, url: `/v1/webhooks/${theirs}` },
        { method: 'POST' as const, url: `/v1/webhooks/${theirs}/rotate-secret` },
        { method: 'GET' as const, url: `/v1/webhooks/${theirs}/deliveries` },
        { method: 'POST' as const, url: `/v1/webhooks/${theirs}/deliveries/msg_x/retry` },
        { method: 'POST' as const, url: `/v1/webhooks/${theirs}/test` },
      ];
      for (const route of routes) {
        const res = await h.request(acme, route);
        assert.equal(res.statusCode, 404, `${route.method} ${route.url}`);
        assert.deepEqual(res.json(), {
          error: 'Not found',
          message: `Webhook not found: ${theirs}`,
        });
      }
      const still = await h.request(other, { method: 'GET', url: `/v1/webhooks/${theirs}` });
      assert.equal(still.json().enabled, true);
      const mine = await h.request(acme, { method: 'GET', url: '/v1/webhooks' });
      assert.ok(mine.json().webhooks.every((w: { id: string }) => w.id !== theirs));
    });

    it('queues test sends and refuses retries of unknown messages', async () => {
      const { id } = (
        await create(acme, { url: 'http://127.0.0.1:9/t', events: ['pixel.created'] })
      ).json();
      const sent = await h.request(acme, { method: 'POST', url: `/v1/webhooks/${id}/test` });
      assert.equal(sent.statusCode, 202);
      assert.equal(sent.json().event, 'event.tracked');
      assert.match(sent.json().message_id, /^msg_/);
      const typed = await h.request(acme, {
        method: 'POST',
        url: `/v1/webhooks/${id}/test`,
        payload: { event: 'subscription.updated' },
      });
      assert.equal(typed.json().event, 'subscription.updated');
      const bad = await h.request(acme, {
        method: 'POST',
        url: `/v1/webhooks/${id}/test`,
        payload: { event: 'nope' },
      });
      assert.equal(bad.statusCode, 400);
      const retry = await h.request(acme, {
        method: 'POST',
        url: `/v1/webhooks/${id}/deliveries/${sent.json().message_id}/retry`,
      });
      assert.equal(retry.statusCode, 202);
      const unknown = await h.request(acme, {
        method: 'POST',
        url: `/v1/webhooks/${id}/deliveries/msg_unknown/retry`,
      });
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(unknown.json(), {
        error: 'Not found',
        message: 'Message not found: msg_unknown',
      });
    });
  });
}
