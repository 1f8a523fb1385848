/**
 * Keys and credentials never reach a log line, whatever field carries them (issue 15 item 8):
 * a key sent as `?api_key=` is in the URL Fastify logs at debug/trace, a secret can be quoted
 * in an error message, a password sits in a database URL.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { scanLogText } from '../test/log-scan.ts';
import { systemClock } from './domain/ports/clock.ts';
import { buildApp } from './http/app.ts';
import { createLogger } from './logger.ts';
import { SqliteStore } from './storage/sqlite/store.ts';

const API_KEY = 'tw_live_4bQ9zX1yT7cV3nM8kL2pR6sW0dF5gH9j4bQ9zX1yT7cV3nM8k';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+/MfKQ9r8GKYqrTw=';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger('trace', sink), text: () => lines.join('\n') };
}

describe('logger', () => {
  it('redacts a key sent in the query string from the request URL logged at trace', async () => {
    const { logger, text } = capture();
    const store = await SqliteStore.open(':memory:');
    const app = await buildApp({
      store,
      clock: systemClock,
      config: { trustProxy: false, webhookAllowPrivate: false, webhookAllowHttp: false },
      logger,
      rateLimiter: null,
    });
    try {
      const res = await app.inject({
        method: 'GET',
        url: `/v1/pixels?api_key=${API_KEY}&secret=${encodeURIComponent(SECRET)}`,
      });
      assert.equal(res.statusCode, 401);
    } finally {
      await app.close();
      await store.close();
    }
    assert.match(text(), /"url":"\/v1\/pixels\?api_key=tw_live_\[redacted\]/, 'the URL is logged');
    assert.deepEqual(scanLogText(text()), []);
    assert.ok(!text().includes(API_KEY.slice(8, 20)));
  });

  it('redacts keys, secrets and URL passwords in messages and errors', () => {
    const { logger, text } = capture();
    logger.warn(`receiver answered: invalid signature for ${SECRET}`);
    logger.error({ err: new Error(`bad key ${API_KEY}`) }, 'failed');
    logger.info({ target: 'postgres://trackway:hunter2pw@db:5432/tw' }, 'connecting');
    logger.info({ url: 'redis://hunter2pw@cache:6379' }, 'connecting');
    assert.deepEqual(scanLogText(text()), []);
    assert.ok(!text().includes('hunter2pw'), text());
    assert.ok(!text().includes(SECRET.slice(6, 20)), text());
    assert.match(text(), /postgres:\/\/trackway:\*\*\*@db:5432\/tw/);
  });
});
