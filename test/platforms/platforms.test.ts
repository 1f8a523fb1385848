/** Light checks of the local platform servers themselves: the contract points tests rely on. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { startGa4Server } from './ga4-server.ts';
import { startMetaServer } from './meta-server.ts';
import { startTiktokServer } from './tiktok-server.ts';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, json: text ? JSON.parse(text) : undefined };
}

const nowS = () => Math.floor(Date.now() / 1000);
const metaEvent = (id: string, time = nowS()) => ({
  event_name: 'Lead',
  event_time: time,
  event_id: id,
  action_source: 'email',
  user_data: { em: ['a'.repeat(64)] },
});

describe('local platform servers', () => {
  it('Meta: rejects a whole batch for one stale event (100/2804003), deduplicates repeats', async () => {
    const meta = await startMetaServer();
    try {
      const url = `${meta.url}/${meta.pixelId}/events?access_token=${meta.accessToken}`;
      const stale = await post(url, {
        data: [metaEvent('a'), metaEvent('b', nowS() - 8 * 86_400)],
      });
      assert.equal(stale.status, 400);
      assert.equal(stale.json.error.code, 100);
      assert.equal(stale.json.error.error_subcode, 2804003);
      assert.equal(stale.json.error.is_transient, false);
      assert.equal(typeof stale.json.error.fbtrace_id, 'string');
      assert.equal(meta.events.length, 0);

      const tooMany = await post(url, {
        data: Array.from({ length: 1_001 }, (_, i) => metaEvent(`m${i}`)),
      });
      assert.equal(tooMany.status, 400);

      assert.equal((await post(url, { data: [metaEvent('a')] })).json.events_received, 1);
      assert.equal((await post(url, { data: [metaEvent('a')] })).json.events_received, 1);
      assert.equal(meta.events.length, 1);
      assert.equal(meta.duplicates, 1);
    } finally {
      await meta.close();
    }
  });

  it('hang mode holds the request unanswered until the server closes', async () => {
    const meta = await startMetaServer();
    meta.mode = 'hang';
    let settled = false;
    const pending = post(`${meta.url}/${meta.pixelId}/events?access_token=${meta.accessToken}`, {
      data: [metaEvent('h')],
    }).finally(() => {
      settled = true;
    });
    await meta.waitFor(() => meta.requests.length === 1);
    assert.equal(settled, false);
    await meta.close();
    await assert.rejects(pending);
  });

  it('GA4: /mp/collect answers 204 to anything and keeps only valid events with the right secret', async () => {
    const ga4 = await startGa4Server();
    try {
      const query = `measurement_id=${ga4.measurementId}&api_secret=${ga4.apiSecret}`;
      const good = { client_id: '1.2', events: [{ name: 'purchase', params: { value: 1 } }] };
      assert.equal((await post(`${ga4.origin}/mp/collect?${query}`, { events: [] })).status, 204);
      assert.equal(
        (
          await post(
            `${ga4.origin}/mp/collect?measurement_id=${ga4.measurementId}&api_secret=no`,
            good,
          )
        ).status,
        204,
      );
      assert.equal(ga4.events.length, 0);
      assert.equal((await post(`${ga4.origin}/mp/collect?${query}`, good)).status, 204);
      assert.equal(ga4.events.length, 1);
      const debug = await post(`${ga4.origin}/debug/mp/collect?${query}`, {
        client_id: '1.2',
        events: Array.from({ length: 26 }, () => ({ name: 'x' })),
      });
      assert.deepEqual(
        debug.json.validationMessages.map((m: { validationCode: string }) => m.validationCode),
        ['EXCEEDED_MAX_ENTITIES'],
      );
    } finally {
      await ga4.close();
    }
  });

  it('TikTok: refuses with HTTP 200 and a code, and caps a request at 1,000 events', async () => {
    const tiktok = await startTiktokServer();
    try {
      const url = `${tiktok.url}/event/track/`;
      const event = { event: 'ViewContent', event_time: nowS(), event_id: 'e1', user: {} };
      const body = (n: number) => ({
        event_source: 'web',
        event_source_id: tiktok.pixelCode,
        data: Array.from({ length: n }, () => event),
      });
      const noToken = await post(url, body(1));
      assert.deepEqual([noToken.status, noToken.json.code], [200, 40105]);
      const tooMany = await post(url, body(1_001), { 'access-token': tiktok.accessToken });
      assert.deepEqual([tooMany.status, tooMany.json.code], [200, 40002]);
      const ok = await post(url, body(2), { 'access-token': tiktok.accessToken });
      assert.deepEqual([ok.status, ok.json.code], [200, 0]);
      assert.equal(tiktok.events.length, 1);
      assert.equal(tiktok.duplicates, 1);
    } finally {
      await tiktok.close();
    }
  });
});
