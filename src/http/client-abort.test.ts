/**
 * A client that closes its connection mid-body is the client's doing, not a storage outage
 * (issue 15 item 9): before, Node's `ECONNRESET` "aborted" matched the storage-error list and
 * was logged as `storage unavailable` and counted as a 503, a false outage alarm.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { testStores } from '../../test/harness.ts';
import { createAccount } from '../domain/accounts/accounts.ts';
import { systemClock } from '../domain/ports/clock.ts';
import { createLogger } from '../logger.ts';
import { buildApp } from './app.ts';
import { createMetrics } from './metrics.ts';

for (const kind of await testStores()) {
  describe(`a client closing its connection mid-body (${kind.name})`, () => {
    it('is neither logged as a storage outage nor counted as a 5xx', async () => {
      const lines: string[] = [];
      // Resolved by the line that says how the request ended, whichever it is.
      let ended: () => void = () => {};
      const outcome = new Promise<void>((resolve) => {
        ended = resolve;
      });
      const sink = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          if (/storage unavailable|client closed the connection/.test(String(chunk))) ended();
          done();
        },
      });
      const store = await kind.open();
      const metrics = createMetrics();
      const { apiKey } = await createAccount(
        { store, clock: systemClock },
        { name: 'Abort', plan: 'pro' },
      );
      const app = await buildApp({
        store,
        clock: systemClock,
        config: { trustProxy: false, webhookAllowPrivate: false, webhookAllowHttp: false },
        logger: createLogger('debug', sink),
        rateLimiter: null,
        metrics,
      });
      try {
        const url = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
        const arrived = once(app.server, 'request') as Promise<[IncomingMessage]>;
        const socket = connect(Number(url.port), '127.0.0.1');
        await once(socket, 'connect');
        socket.write(
          `POST /v1/track HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"pixel_id":"px_`,
        );
        // Hang up once the request is authenticated and its body is being read.
        const [request] = await arrived;
        while (request.listenerCount('data') === 0) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        socket.destroy();
        await outcome;
        const text = lines.join('');
        assert.doesNotMatch(text, /storage unavailable/, text);
        const counted = await metrics.registry.getSingleMetricAsString(
          'trackway_http_request_duration_seconds',
        );
        assert.doesNotMatch(counted, /status="5\d\d"/, counted);
      } finally {
        await app.close();
        await store.close();
      }
    });
  });
}
