/**
 * What every route does with the body it is sent (issue 15 items 2 and 11, contract §3):
 * an empty `application/json` body is not JSON where a body is needed; a route that takes no
 * body refuses one that says something, by the unknown-field rule, instead of ignoring it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';

const JSON_TYPE = { 'content-type': 'application/json' };

for (const kind of await testStores()) {
  describe(`request bodies [${kind.name}]`, () => {
    let h: Harness;
    let owner: TestAccount;
    let pixelId: string;
    let webhookId: string;

    before(async () => {
      h = await startHarness(kind);
      owner = await h.account('pro');
      pixelId = await h.pixel(owner);
      const created = await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'http://127.0.0.1:9/hooks' },
      });
      assert.equal(created.statusCode, 201);
      webhookId = created.json().id;
    });
    after(() => h.close());

    const send = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: string) =>
      h.request(owner, {
        method,
        url,
        ...(body !== undefined && { headers: JSON_TYPE, payload: body }),
      });

    it('answers an empty application/json body with 400 Malformed JSON body wherever a body is needed', async () => {
      const routes: Array<['POST' | 'PATCH', string]> = [
        ['POST', '/v1/track'],
        ['POST', '/v1/track/batch'],
        ['POST', '/v1/pixels'],
        ['PATCH', `/v1/pixels/${pixelId}`],
        ['POST', '/v1/webhooks'],
        ['PATCH', `/v1/webhooks/${webhookId}`],
      ];
      for (const [method, url] of routes) {
        const empty = await send(method, url, '');
        assert.equal(empty.statusCode, 400, `${method} ${url}`);
        assert.deepEqual(
          empty.json(),
          { error: 'Invalid request', message: 'Malformed JSON body' },
          `${method} ${url}`,
        );
        // JSON that is not an object keeps its own message.
        const array = await send(method, url, '[]');
        assert.equal(array.statusCode, 400, `${method} ${url}`);
        assert.equal(
          array.json().message,
          'Request body must be a JSON object',
          `${method} ${url}`,
        );
      }
    });

    it('treats an empty body as no body where the body is optional (POST …/test)', async () => {
      const res = await send('POST', `/v1/webhooks/${webhookId}/test`, '');
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().event, 'event.tracked');
    });

    it('refuses a field sent to a route that takes no body: rotate-secret, retry, delete', async () => {
      const rotate = await send(
        'POST',
        `/v1/webhooks/${webhookId}/rotate-secret`,
        '{"secret": "whsec_mine"}',
      );
      assert.equal(rotate.statusCode, 400);
      assert.deepEqual(rotate.json(), {
        error: 'Invalid request',
        message: 'Unknown field: secret',
        field: 'secret',
      });
      const retry = await send(
        'POST',
        `/v1/webhooks/${webhookId}/deliveries/msg_0000000000000000000000000/retry`,
        '{"now": true}',
      );
      assert.equal(retry.statusCode, 400);
      assert.equal(retry.json().message, 'Unknown field: now');
      const remove = await send('DELETE', `/v1/webhooks/${webhookId}`, '{"force": true}');
      assert.equal(remove.statusCode, 400);
      assert.equal(remove.json().message, 'Unknown field: force');
      const still = await h.request(owner, { method: 'GET', url: `/v1/webhooks/${webhookId}` });
      assert.equal(still.statusCode, 200, 'the refused DELETE deleted nothing');
    });

    it('refuses non-JSON and non-object bodies there too, and accepts none, empty or {}', async () => {
      const url = `/v1/webhooks/${webhookId}/rotate-secret`;
      const notJson = await send('POST', url, 'secret=whsec_mine');
      assert.equal(notJson.statusCode, 400);
      assert.equal(notJson.json().message, 'Malformed JSON body');
      for (const body of ['["whsec_mine"]', '"whsec_mine"', 'null', '7']) {
        const res = await send('POST', url, body);
        assert.equal(res.statusCode, 400, body);
        assert.equal(res.json().message, 'Request body must be a JSON object', body);
      }
      for (const body of [undefined, '', '{}', ' {} ']) {
        const res = await send('POST', url, body);
        assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`);
      }
    });
  });
}
