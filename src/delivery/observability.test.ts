/**
 * What an operator alerts on (issue 22): a failing endpoint is logged at `warn` on every
 * attempt and when it is switched off; /metrics lists every series from the start, and the
 * outbox depth and age gauges read the store's queue (both stores).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, testStores } from '../../test/harness.ts';
import { type Receiver, startReceiver } from '../../test/receiver.ts';
import { systemClock } from '../domain/ports/clock.ts';
import { createMetrics, type Metrics } from '../http/metrics.ts';
import { createLogger } from '../logger.ts';
import { createSender } from './sender.ts';
import { DeliveryWorker } from './worker.ts';

/** An `info` logger (the production default) whose JSON lines the test reads. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      for (const wake of waiters) wake();
      done();
    },
  });
  return {
    logger: createLogger('info', stream),
    lines,
    raw,
    /** Resolves once a line with this `msg` has been logged. */
    waitFor(msg: string): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (!lines.some((l) => l['msg'] === msg)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
  };
}

const series = (text: string, name: string) => {
  const match = text.match(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm'));
  return match ? Number(match[1]) : undefined;
};

for (const kind of await testStores()) {
  describe(`operator signals: logs and metrics [${kind.name}]`, () => {
    let h: Harness;
    let metrics: Metrics;
    let worker: DeliveryWorker;
    let receiver: Receiver;
    const log = capturedLogger();
    const sender = createSender({ allowPrivate: true, allowHttp: true });

    before(async () => {
      metrics = createMetrics();
      h = await startHarness(kind, { metrics, onOutboxWrite: () => worker.wake() });
      receiver = await startReceiver();
      worker = new DeliveryWorker({
        store: h.store.webhooks,
        clock: systemClock,
        sender,
        logger: log.logger,
        schedule: [0, 0, 0],
        pollMs: 50,
        metrics,
      });
    });
    after(async () => {
      await receiver.close();
      await worker.stop();
      await sender.close();
      await h.close();
    });

    const scrape = async () => {
      const res = await h.request(null, { method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200);
      return res.body;
    };

    it('lists every counter, the gauges and the latency histograms at 0 before any traffic', async () => {
      const text = await scrape();
      for (const name of [
        'trackway_rate_limited_total{scope="account"}',
        'trackway_rate_limited_total{scope="failed_auth"}',
        'trackway_events_tracked_total{result="stored"}',
        'trackway_events_tracked_total{result="deduplicated"}',
        'trackway_webhook_attempts_total{outcome="succeeded"}',
        'trackway_webhook_attempts_total{outcome="retry"}',
        'trackway_webhook_attempts_total{outcome="failed"}',
        'trackway_webhook_attempt_duration_seconds_count{outcome="retry"}',
        'trackway_webhook_endpoints_disabled_total{reason="gone"}',
        'trackway_webhook_endpoints_disabled_total{reason="failing"}',
        'trackway_delivery_latency_seconds_count{kind="webhook"}',
        'trackway_rate_limit_fallback',
        'trackway_outbox_depth{kind="webhook"}',
        'trackway_outbox_oldest_pending_age_seconds{kind="webhook"}',
        'trackway_outbox_lag_seconds{kind="webhook"}',
      ]) {
        assert.equal(series(text, name), 0, `${name} is listed at 0`);
      }
    });

    it('reads the outbox depth and oldest age from the store', async () => {
      const owner = await h.account();
      const res = await h.request(owner, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: receiver.url, events: ['pixel.created'] },
      });
      assert.equal(res.statusCode, 201, res.body);
      await h.pixel(owner);
      h.clock.advance(30_000);
      await h.pixel(owner);
      const { pending } = await h.store.webhooks.backlog();
      assert.equal(pending, 2);
      const text = await scrape();
      assert.equal(series(text, 'trackway_outbox_depth{kind="webhook"}'), pending);
      assert.equal(series(text, 'trackway_outbox_oldest_pending_age_seconds{kind="webhook"}'), 30);
      // Both were due at once (the worker is not running): the first has waited 30 s.
      assert.equal(series(text, 'trackway_outbox_lag_seconds{kind="webhook"}'), 30);
    });

    it('logs a failed attempt and the endpoint being disabled at warn, without secret or body', async () => {
      // The two messages of the previous test: a 500, then a 410 switches the endpoint off.
      let answered = 0;
      receiver.respond = () => ({ status: answered++ === 0 ? 500 : 410, body: 'no' });
      worker.start();
      await log.waitFor('webhook endpoint disabled');

      const failed = log.lines.filter((l) => l['msg'] === 'webhook delivery attempt failed');
      assert.ok(failed.length >= 2, JSON.stringify(log.lines));
      assert.equal(failed[0]?.['level'], 40, 'warn');
      assert.deepEqual(
        failed.map((l) => l['status_code']),
        [500, 410],
      );
      assert.match(String(failed[0]?.['endpoint_id']), /^wh_/);
      assert.match(String(failed[0]?.['message_id']), /^msg_/);
      assert.equal(failed[0]?.['error'], 'HTTP 500');
      const disabled = log.lines.find((l) => l['msg'] === 'webhook endpoint disabled');
      assert.equal(disabled?.['level'], 40, 'warn');
      assert.equal(disabled?.['endpoint_id'], failed[0]?.['endpoint_id']);
      assert.match(String(disabled?.['reason']), /410/);
      const everything = log.raw.join('\n');
      assert.ok(!everything.includes('whsec_'), 'no signing secret');
      assert.ok(!everything.includes('"data"'), 'no message body');
      assert.ok(!everything.includes(receiver.url), 'no endpoint URL');

      await worker.stop();
      const text = await scrape();
      assert.equal(series(text, 'trackway_webhook_endpoints_disabled_total{reason="gone"}'), 1);
      assert.equal(series(text, 'trackway_webhook_attempts_total{outcome="retry"}'), 1);
      assert.equal(series(text, 'trackway_webhook_attempts_total{outcome="failed"}'), 1);
      assert.equal(
        series(text, 'trackway_webhook_attempt_duration_seconds_count{outcome="failed"}'),
        1,
      );
      // What the disabled endpoint still has waits for its owner: not the worker's backlog.
      assert.equal(series(text, 'trackway_outbox_depth{kind="webhook"}'), 0);
    });
  });
}
