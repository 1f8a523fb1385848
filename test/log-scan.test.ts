import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scanLogText } from './log-scan.ts';

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({ level: 30, time: 1, service: 'trackway', ...fields });

describe('log scan', () => {
  it('finds keys, secrets, emails and phone numbers in log records', () => {
    const text = [
      record({ msg: 'auth', key: 'tw_live_4bQ9zX1yT7cV3nM8kL2pR6sW0dF5gH9j' }),
      record({ msg: 'sign', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
      record({ msg: 'user Jane.Doe@Example.com tracked' }),
      record({ msg: 'phone +1 (650) 555-0123' }),
      record({ msg: 'phone +16505550123' }),
      record({ req: { url: '/v1/pixels?api_key=tw_live_4bQ9zX1yT7cV3nM8kL2pR6sW0dF5gH9j' } }),
      record({ msg: 'DATABASE_URL must be …, got "mysql://trackway:hunter2@db/tw"' }),
      record({ msg: 'connecting to redis://hunter2@cache:6379' }),
    ].join('\n');
    assert.deepEqual(
      scanLogText(text).map((f) => f.kind),
      [
        'API key',
        'webhook secret',
        'email address',
        'phone number',
        'phone number',
        'API key',
        'URL credentials',
        'URL credentials',
      ],
    );
  });

  it('passes hashes, ids, timestamps with offsets and non-log output', () => {
    const text = [
      record({
        msg: 'tracked',
        email: 'c3499c2729730a7f807efb8676a92dcb6f8a3f8f8f2f2a8fc8a6d4de0f6d7c41',
        pixel_id: 'px_4bQ9zX1yT7cV3nM8',
        at: '2026-11-23T10:00:00.000+01:00',
        key: 'tw_live_4bQ…9zX1',
        url: '/v1/pixels?api_key=tw_live_[redacted]',
        database: 'postgres://trackway:***@db:5432/tw',
        redis: 'redis://***@cache:6379',
        receiver: 'https://hooks.example.com/trackway',
      }),
      'Your API key (shown once): tw_live_4bQ9zX1yT7cV3nM8kL2pR6sW0dF5gH9j',
    ].join('\n');
    assert.deepEqual(scanLogText(text), []);
  });
});
