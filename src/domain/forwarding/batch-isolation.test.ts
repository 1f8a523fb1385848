import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable } from '../../../test/platforms/forwardable.ts';
import { type MetaServer, startMetaServer } from '../../../test/platforms/meta-server.ts';
import { send } from '../../../test/platforms/send.ts';
import { isolateRefusal } from './batch-isolation.ts';
import type { PlatformRequest } from './model.ts';
import { PLATFORM_MODULES } from './platforms/registry.ts';

const { meta: metaModule, ga4: ga4Module, tiktok: tiktokModule } = PLATFORM_MODULES;

describe('isolating the event that made a platform refuse its batch', () => {
  let meta: MetaServer;
  before(async () => {
    meta = await startMetaServer();
  });
  after(() => meta.close());

  it('only splits permanent refusals from platforms that refuse whole batches', () => {
    const permanent = { kind: 'permanent', message: 'bad' } as const;
    assert.deepEqual(isolateRefusal(metaModule, permanent, 5), {
      kind: 'split',
      parts: [
        [0, 3],
        [3, 5],
      ],
    });
    assert.deepEqual(isolateRefusal(tiktokModule, permanent, 1), {
      kind: 'fail-event',
      message: 'bad',
    });
    assert.deepEqual(isolateRefusal(ga4Module, permanent, 5), { kind: 'apply' });
    assert.deepEqual(isolateRefusal(metaModule, { kind: 'auth', message: 'x' }, 5), {
      kind: 'apply',
    });
    assert.deepEqual(isolateRefusal(metaModule, { kind: 'transient', message: 'x' }, 5), {
      kind: 'apply',
    });
  });

  it('gets 499 of 500 events through a real Meta-like server around one poisoned event', async () => {
    const now = new Date();
    const config = { pixel_id: meta.pixelId, access_token: meta.accessToken };
    const events = Array.from({ length: 500 }, () => forwardable());
    const poisoned = events[317]!.event.eventId;
    meta.rejectEvent = (event) =>
      event['event_id'] === poisoned
        ? 'The parameter custom_data.order_ref is invalid.'
        : undefined;

    // The engine's loop, reduced to what isolation needs.
    const failed = new Map<string, string>();
    const queue: PlatformRequest[] = metaModule.build(events, config, { now }).requests;
    let sent = 0;
    while (queue.length > 0) {
      const request = queue.shift()!;
      sent += 1;
      const answer = await send(meta.url, request);
      const verdict = metaModule.classify(
        { kind: 'response', status: answer.status, body: answer.body },
        now,
      );
      const isolation = isolateRefusal(metaModule, verdict, request.eventIds.length);
      if (isolation.kind === 'fail-event') failed.set(request.eventIds[0]!, isolation.message);
      if (isolation.kind !== 'split') continue;
      const data = request.body['data'] as unknown[];
      for (const [start, end] of isolation.parts) {
        queue.push({
          ...request,
          body: { ...request.body, data: data.slice(start, end) },
          eventIds: request.eventIds.slice(start, end),
        });
      }
    }
    delete meta.rejectEvent;

    assert.equal(meta.events.length, 499);
    assert.ok(!meta.events.some((e) => e['event_id'] === poisoned));
    assert.deepEqual([...failed.keys()], [poisoned]);
    assert.match(failed.get(poisoned)!, /custom_data\.order_ref is invalid/);
    assert.ok(sent <= 1 + 2 * Math.ceil(Math.log2(500)), `${sent} requests`);
  });
});
