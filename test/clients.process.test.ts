/**
 * The shared scenario of the official clients (clients/python, go, php, ruby), each against the
 * real server on both stores (a SQLite file; PostgreSQL + Redis), through a real HTTP proxy that
 * injects faults. Per client: 1,000 events tracked while the first batch's answer is lost, one
 * batch is answered 429 and the server is SIGKILLed and restarted mid-run — every event must
 * be reported accepted and stored exactly once; then every event is iterated back and one read
 * by id; then a real webhook delivery is verified before and after a secret rotation.
 *
 * Each client ships a driver (`scenario.py`, `./scenario`, `scenario.php`, `scenario.rb`) that
 * prints one JSON object on its last line; see test/clients/drivers.ts. A client not in the
 * repository is skipped; a missing toolchain is skipped too, except under CI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ClientDriver, DRIVERS, lastJson, run, step, unavailable } from './clients/drivers.ts';
import { type FaultProxy, startFaultProxy } from './clients/proxy.ts';
import { type ClientServer, clientStores, startClientServer } from './clients/server.ts';
import { type Received, type Receiver, startReceiver } from './receiver.ts';

const COUNT = 1000;
const LOST_ANSWER = 1; // its resend is batch 2
const RATE_LIMITED = 3; // its resend is batch 4
const KILLED = 6;

interface TrackOutput {
  ok: number;
  failed: number;
  errors: string[];
  /** track() + close(), measured by the driver (bench/clients.ts reads it). */
  seconds?: number;
}
interface VerifyOutput {
  ok: boolean;
  event?: string;
  code?: string;
  message?: string;
}

const WRONG_SECRET = `whsec_${Buffer.from('not-the-secret-of-this-endpoint!').toString('base64')}`;

for (const store of await clientStores()) {
  describe(`official clients against the real server (${store})`, { timeout: 600_000 }, () => {
    let server: ClientServer;
    let proxy: FaultProxy;
    let receiver: Receiver;
    let deliveries: Promise<{ before: Received; after: Received; secrets: [string, string] }>;

    before(async () => {
      server = await startClientServer(store, {
        TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
      });
      proxy = await startFaultProxy(() => server.url);
      receiver = await startReceiver();
    });
    after(async () => {
      proxy?.close();
      await receiver?.close();
      await server?.stop();
    });

    /** Two real deliveries, one before and one after a rotation; made once, shared. */
    function webhookDeliveries() {
      deliveries ??= (async () => {
        const pixel = await server.api<{ id: string }>('POST', '/v1/pixels', {
          name: 'Webhooks',
          domain: 'shop.example.com',
        });
        const hook = await server.api<{ id: string; secret: string }>('POST', '/v1/webhooks', {
          url: receiver.url,
          events: ['event.tracked'],
        });
        const tracked = (id: string) =>
          receiver.waitFor((all) => all.some((r) => r.json.data['event_id'] === id));
        const find = (id: string) => receiver.received.find((r) => r.json.data['event_id'] === id)!;
        await server.api('POST', '/v1/track', {
          pixel_id: pixel.id,
          event_name: 'Purchase',
          event_id: 'before-rotation',
          value: 1,
          currency: 'USD',
        });
        await tracked('before-rotation');
        const rotated = await server.api<{ secret: string }>(
          'POST',
          `/v1/webhooks/${hook.id}/rotate-secret`,
        );
        await server.api('POST', '/v1/track', {
          pixel_id: pixel.id,
          event_name: 'Purchase',
          event_id: 'after-rotation',
        });
        await tracked('after-rotation');
        // No more deliveries: the clients' 1,000-event runs must not feed the receiver.
        await server.api('DELETE', `/v1/webhooks/${hook.id}`);
        return {
          before: find('before-rotation'),
          after: find('after-rotation'),
          secrets: [hook.secret, rotated.secret] as [string, string],
        };
      })();
      return deliveries;
    }

    async function verify(
      driver: ClientDriver,
      delivery: Received,
      secrets: string[],
    ): Promise<VerifyOutput> {
      const input = JSON.stringify({ body: delivery.body, headers: delivery.headers, secrets });
      const result = await run(
        step(await driver.scenario(), 'verify'),
        { TRACKWAY_URL: server.url },
        input,
      );
      assert.equal(result.code, 0, result.stderr);
      return lastJson<VerifyOutput>(result);
    }

    for (const driver of DRIVERS) {
      it(`${driver.name}: ${COUNT} events through a lost answer, a 429 and a SIGKILL of the server, each stored once, all iterated back`, async (t) => {
        const reason = unavailable(driver);
        if (reason) return t.skip(reason);
        const scenario = await driver.scenario();
        const pixel = await server.api<{ id: string }>('POST', '/v1/pixels', {
          name: `Scenario ${driver.name}`,
          domain: 'shop.example.com',
        });
        let restarted: Promise<void> | undefined;
        proxy.arm({
          dropAnswerOf: LOST_ANSWER,
          rateLimit: RATE_LIMITED,
          killAt: KILLED,
          kill: async () => {
            await server.kill();
            restarted = server.restart();
          },
        });
        const env = {
          TRACKWAY_URL: proxy.url,
          TRACKWAY_API_KEY: server.apiKey,
          PIXEL_ID: pixel.id,
          COUNT: String(COUNT),
        };
        const result = await run(step(scenario, 'track'), env, '', 180_000);
        await restarted;
        assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
        const output = lastJson<TrackOutput>(result);
        assert.deepEqual(
          { ok: output.ok, failed: output.failed, errors: output.errors },
          { ok: COUNT, failed: 0, errors: [] },
        );

        const seen = proxy.batches;
        const at = (n: number) => seen[n - 1]!;
        assert.ok(seen.length >= KILLED, `only ${seen.length} batches: ${JSON.stringify(seen)}`);
        // The lost answer: the resend carries the same ids and the server keeps the first.
        assert.equal(at(LOST_ANSWER).outcome, 'dropped');
        assert.ok(at(LOST_ANSWER).ids.length > 0);
        assert.deepEqual(at(LOST_ANSWER + 1).ids, at(LOST_ANSWER).ids);
        assert.equal(at(LOST_ANSWER + 1).answer?.deduplicated, at(LOST_ANSWER).ids.length);
        // The 429: resent with the same ids no sooner than retry_after (1 s).
        assert.equal(at(RATE_LIMITED).outcome, 'rate-limited');
        assert.deepEqual(at(RATE_LIMITED + 1).ids, at(RATE_LIMITED).ids);
        const waited = at(RATE_LIMITED + 1).at - at(RATE_LIMITED).at;
        assert.ok(waited >= 990, `resent ${Math.round(waited)} ms after the 429`);
        // The kill: that batch was sent again until the restarted server answered.
        assert.equal(at(KILLED).outcome, 'killed');
        const killedIds = JSON.stringify(at(KILLED).ids);
        assert.ok(
          seen.slice(KILLED).some((b) => JSON.stringify(b.ids) === killedIds && b.answer),
          'the batch in flight at the kill was resent and answered',
        );
        // Every event ever sent carries a client-made event_id.
        const sentIds = new Set(seen.flatMap((b) => b.ids));
        assert.equal(sentIds.size, COUNT);

        // Stored exactly once: the pixel holds COUNT events, every id of them distinct.
        const page = await server.api<{ total: number }>(
          'GET',
          `/v1/pixels/${pixel.id}/events?limit=1`,
        );
        assert.equal(page.total, COUNT);
        const iterated = await run(step(scenario, 'iterate'), { ...env, TRACKWAY_URL: server.url });
        assert.equal(iterated.code, 0, iterated.stderr);
        assert.deepEqual(lastJson(iterated), { count: COUNT, distinct_event_ids: COUNT });

        // One event by id, as the client reads it.
        const [someId] = [...sentIds].slice(-1);
        const got = await run(step(scenario, 'get'), {
          ...env,
          TRACKWAY_URL: server.url,
          EVENT_ID: someId!,
        });
        assert.equal(got.code, 0, got.stderr);
        assert.deepEqual(lastJson(got), { event_id: someId, event_name: 'Purchase' });
      });

      it(`${driver.name}: verifies a real webhook delivery before and after a secret rotation`, async (t) => {
        const reason = unavailable(driver);
        if (reason) return t.skip(reason);
        const { before: first, after: second, secrets } = await webhookDeliveries();
        const [old, fresh] = secrets;
        // After the rotation the delivery is signed with both secrets (Standard Webhooks).
        assert.equal(String(second.headers['webhook-signature']).split(' ').length, 2);

        assert.deepEqual(await verify(driver, first, [old]), { ok: true, event: 'event.tracked' });
        const wrong = await verify(driver, first, [WRONG_SECRET]);
        assert.equal(wrong.ok, false);
        assert.equal(wrong.code, 'invalid_signature');
        assert.ok(wrong.message);
        const tampered = await verify(
          driver,
          { ...first, body: first.body.replace('"value":1', '"value":1000') },
          [old],
        );
        assert.equal(tampered.code, 'invalid_signature');
        const unsigned = await verify(driver, { ...first, headers: {} }, [old]);
        assert.equal(unsigned.code, 'missing_signature');

        assert.deepEqual(await verify(driver, second, [fresh]), {
          ok: true,
          event: 'event.tracked',
        });
        assert.deepEqual(await verify(driver, second, [old, fresh]), {
          ok: true,
          event: 'event.tracked',
        });
        assert.equal((await verify(driver, second, [WRONG_SECRET])).code, 'invalid_signature');
        // The delivery made before the rotation was never signed with the new secret.
        assert.equal((await verify(driver, first, [fresh])).code, 'invalid_signature');
      });
    }
  });
}
