import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { EXPORT_PAGE } from '../../domain/lifecycle/export.ts';

for (const kind of await testStores()) {
  describe(`GET /v1/pixels/:pixel_id/events/export [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;
    const COUNT = EXPORT_PAGE * 2 + 7;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('ultra');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
      // Newest first in arrival, so oldest-first output is the store's order, not arrival's.
      const base = Date.parse('2026-03-01T00:00:00Z');
      for (let start = 0; start < COUNT; start += 500) {
        const events = [];
        for (let i = start; i < Math.min(start + 500, COUNT); i++) {
          events.push({
            pixel_id: pixelId,
            event_name: 'Purchase',
            event_id: `e${i}`,
            timestamp: new Date(base + (COUNT - i) * 1000).toISOString(),
            value: i,
            currency: 'USD',
            custom_data: { note: i === 3 ? 'say "hi", then\nleave' : 'plain' },
          });
        }
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/batch',
          payload: { events },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(() => h.close());

    const exportOf = (owner: TestAccount, query: string, id = pixelId) =>
      h.request(owner, { method: 'GET', url: `/v1/pixels/${id}/events/export?${query}` });

    it('streams ndjson, one record a line, oldest first, across pages', async () => {
      const res = await exportOf(acme, '');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      const lines = res.body.split('\n');
      assert.equal(lines.pop(), '');
      assert.equal(lines.length, COUNT);
      const records = lines.map((l) => JSON.parse(l));
      assert.equal(records[0].event_id, `e${COUNT - 1}`);
      assert.equal(records.at(-1).event_id, 'e0');
      const times = records.map((r) => Date.parse(r.timestamp));
      assert.ok(times.every((t, i) => i === 0 || t > times[i - 1]!));
      assert.deepEqual(Object.keys(records[0]), [
        'event_id',
        'event_name',
        'value',
        'currency',
        'timestamp',
        'status',
        'pixel_id',
        'url',
        'referrer',
        'title',
        'search_string',
        'custom_data',
        'user_data',
        'action_source',
        'match_quality',
        'received_at',
        'dropped',
        'forwarding',
      ]);
    });

    it('writes csv with a header, nested objects as JSON text, quoted as RFC 4180 asks', async () => {
      const start = new Date(Date.parse('2026-03-01T00:00:00Z') + (COUNT - 3) * 1000).toISOString();
      const res = await exportOf(acme, `format=csv&start_date=${start}&end_date=${start}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      const [header, row, rest] = res.body.split('\r\n');
      assert.equal(
        header,
        'event_id,event_name,value,currency,timestamp,status,pixel_id,url,referrer,title,search_string,custom_data,user_data,action_source,match_quality,received_at,dropped',
      );
      assert.ok(row!.startsWith(`e3,Purchase,3,USD,${start},processed,${pixelId},,,,,`));
      assert.ok(row!.includes(',"{""note"":""say \\""hi\\"", then\\nleave""}",,'), row);
      assert.equal(rest, '');
    });

    it('keeps to the range, refuses bad input, and is 404 for another account', async () => {
      const one = await exportOf(
        acme,
        'start_date=2026-03-01T00:00:01Z&end_date=2026-03-01T00:00:02Z',
      );
      assert.deepEqual(
        one.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).event_id),
        [`e${COUNT - 1}`, `e${COUNT - 2}`],
      );
      const empty = await exportOf(acme, 'start_date=2030-01-01');
      assert.equal(empty.statusCode, 200);
      assert.equal(empty.body, '');
      assert.equal((await exportOf(acme, 'format=xml')).statusCode, 400);
      assert.equal((await exportOf(acme, 'limit=5')).statusCode, 400);
      const reversed = await exportOf(acme, 'start_date=2026-03-02&end_date=2026-03-01');
      assert.equal(reversed.statusCode, 400);
      assert.equal(reversed.json().field, 'start_date');
      assert.equal((await exportOf(other, '')).statusCode, 404);
    });
  });
}
