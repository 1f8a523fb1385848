/**
 * Tenant isolation (issue 7): every route that takes an id, called by one account with another
 * account's ids, answers 404 exactly as for an id that does not exist, and changes nothing.
 * Both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { type Harness, startHarness, type TestAccount, testStores } from './harness.ts';

for (const kind of await testStores()) {
  describe(`tenant isolation matrix [${kind.name}]`, () => {
    let h: Harness;
    let mallory: TestAccount;
    let victim: TestAccount;
    const theirs = { pixel: '', webhook: '', message: '' };
    let myWebhook = '';

    before(async () => {
      h = await startHarness(kind);
      victim = await h.account();
      mallory = await h.account();
      theirs.pixel = await h.pixel(victim);
      const hook = await h.request(victim, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'https://hooks.example.com/victim' },
      });
      theirs.webhook = hook.json().id;
      const sent = await h.request(victim, {
        method: 'POST',
        url: `/v1/webhooks/${theirs.webhook}/test`,
      });
      theirs.message = sent.json().message_id ?? sent.json().id;
      assert.ok(theirs.message, `test send answered ${sent.body}`);
      const mine = await h.request(mallory, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'https://hooks.example.com/mallory' },
      });
      myWebhook = mine.json().id;
    });
    after(() => h.close());

    const attempts = (): Array<[string, InjectOptions]> => [
      ['GET pixel', { method: 'GET', url: `/v1/pixels/${theirs.pixel}` }],
      [
        'PATCH pixel',
        { method: 'PATCH', url: `/v1/pixels/${theirs.pixel}`, payload: { name: 'pwned' } },
      ],
      ['GET events', { method: 'GET', url: `/v1/pixels/${theirs.pixel}/events` }],
      [
        'rotate publishable key',
        { method: 'POST', url: `/v1/pixels/${theirs.pixel}/publishable-key/rotate` },
      ],
      [
        'POST track',
        {
          method: 'POST',
          url: '/v1/track',
          payload: { pixel_id: theirs.pixel, event_name: 'Lead', event_id: 'x-1' },
        },
      ],
      ['GET webhook', { method: 'GET', url: `/v1/webhooks/${theirs.webhook}` }],
      [
        'PATCH webhook',
        {
          method: 'PATCH',
          url: `/v1/webhooks/${theirs.webhook}`,
          payload: { url: 'https://evil.example.com/' },
        },
      ],
      ['rotate secret', { method: 'POST', url: `/v1/webhooks/${theirs.webhook}/rotate-secret` }],
      ['deliveries', { method: 'GET', url: `/v1/webhooks/${theirs.webhook}/deliveries` }],
      [
        'retry delivery',
        {
          method: 'POST',
          url: `/v1/webhooks/${theirs.webhook}/deliveries/${theirs.message}/retry`,
        },
      ],
      [
        'retry their message on my webhook',
        { method: 'POST', url: `/v1/webhooks/${myWebhook}/deliveries/${theirs.message}/retry` },
      ],
      ['test send', { method: 'POST', url: `/v1/webhooks/${theirs.webhook}/test` }],
      ['DELETE webhook', { method: 'DELETE', url: `/v1/webhooks/${theirs.webhook}` }],
    ];

    it('answers 404, with the same body as for a missing id, on every route', async () => {
      const outcomes: string[] = [];
      for (const [name, options] of attempts()) {
        const res = await h.request(mallory, options);
        outcomes.push(`${name}: ${res.statusCode}`);
        assert.equal(res.statusCode, 404, `${name}: ${res.statusCode} ${res.body}`);
        const missing = await h.request(mallory, {
          ...options,
          url: (options.url as string)
            .replace(theirs.pixel, 'px_doesnotexist00')
            .replace(theirs.webhook, 'wh_doesnotexist00')
            .replace(theirs.message, 'msg_doesnotexist'),
        });
        assert.equal(missing.statusCode, 404, `${name} (missing id)`);
        assert.equal(res.json().error, missing.json().error, name);
        assert.ok(!res.body.includes('victim'), `${name} leaks nothing`);
      }
      console.log(`tenant isolation [${kind.name}]: ${outcomes.length} routes → 404`);
    });

    it('keeps another account out of lists and its batch slots', async () => {
      const pixels = await h.request(mallory, { method: 'GET', url: '/v1/pixels' });
      assert.ok(!pixels.body.includes(theirs.pixel));
      const hooks = await h.request(mallory, { method: 'GET', url: '/v1/webhooks' });
      assert.ok(!hooks.body.includes(theirs.webhook));
      const batch = await h.request(mallory, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: { events: [{ pixel_id: theirs.pixel, event_name: 'Lead', event_id: 'b-1' }] },
      });
      assert.equal(batch.statusCode, 200);
      assert.equal(batch.json().results[0].status, 404);
    });

    it("left the victim's data untouched", async () => {
      const pixel = await h.request(victim, { method: 'GET', url: `/v1/pixels/${theirs.pixel}` });
      assert.notEqual(pixel.json().name, 'pwned');
      const events = await h.request(victim, {
        method: 'GET',
        url: `/v1/pixels/${theirs.pixel}/events`,
      });
      assert.equal(events.json().total, 0);
      const hook = await h.request(victim, {
        method: 'GET',
        url: `/v1/webhooks/${theirs.webhook}`,
      });
      assert.equal(hook.statusCode, 200);
      assert.equal(hook.json().url, 'https://hooks.example.com/victim');
    });
  });
}
