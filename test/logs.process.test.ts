/**
 * Secrets and PII never reach the logs (issue 7): a real server at LOG_LEVEL=trace is driven
 * through the whole API, errors included, and everything it printed is searched for the API
 * key, webhook secrets and the raw personal data that was sent.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from './harness.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

const PII = {
  email: 'Leaky.Person@Example.com',
  phone: '+1 (650) 555-0123',
  first_name: 'Zebulon',
  last_name: 'Quackenbush',
  city: 'Xanadu Springs',
  external_id: 'crm-secret-778899',
};

describe('logs at trace level hold no secrets and no PII (real process)', () => {
  const dir = tempDir();
  let server: ServerProcess;
  let apiKey = '';
  const secrets: string[] = [];

  before(async () => {
    const env = {
      DATABASE_URL: `sqlite:${join(dir.path, 'logs.db')}`,
      LOG_LEVEL: 'trace',
      TRACKWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
      TRACKWAY_WEBHOOK_ALLOW_HTTP: 'true',
    };
    const made = await runCli(
      ['accounts', 'create', '--name', 'Logs', '--plan', 'pro', '--json'],
      env,
    );
    apiKey = JSON.parse(made.stdout).api_key;
    server = await startServerProcess(env);
  });
  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('drives every kind of request, then finds none of them in the output', async () => {
    const call = async (method: string, path: string, body?: unknown, key = apiKey) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, string> };
    };
    const pixel = (await call('POST', '/v1/pixels', { name: 'Shop', domain: 'shop.example.com' }))
      .json['id']!;
    const hook = await call('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook' });
    secrets.push(hook.json['secret']!);
    const rotated = await call('POST', `/v1/webhooks/${hook.json['id']}/rotate-secret`);
    secrets.push(rotated.json['secret']!);
    const event = { pixel_id: pixel, event_name: 'Purchase', event_id: 'e-1', user_data: PII };
    assert.equal((await call('POST', '/v1/track', event)).status, 200);
    // Errors that echo input: an invalid event carrying PII, malformed JSON, an unknown field.
    const invalid = { ...event, event_id: 'e-2', value: 'not a number' };
    assert.equal((await call('POST', '/v1/track', invalid)).status, 400);
    assert.equal(
      (await call('POST', '/v1/track', `{"user_data":${JSON.stringify(PII)}`)).status,
      400,
    );
    const unknown = { ...event, event_id: 'e-3', [PII.external_id]: 1 };
    assert.equal((await call('POST', '/v1/track', unknown)).status, 400);
    assert.equal(
      (await call('POST', '/v1/track/batch', { events: [event, { user_data: PII }] })).status,
      200,
    );
    // Wrong and revoked-looking keys.
    const wrong = `${apiKey.slice(0, -4)}AAAA`;
    assert.equal((await call('GET', '/v1/pixels', undefined, wrong)).status, 401);
    assert.equal((await call('GET', '/v1/pixels', undefined, 'tw_live_guess')).status, 401);
    await call('GET', `/v1/pixels/${pixel}/events`);
    await new Promise((resolve) => setTimeout(resolve, 300));

    // The first-run banner is not a log line; only JSON log lines and stderr are searched.
    const logLines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const logs = `${logLines.join('\n')}\n${server.errors()}`;
    assert.ok(logLines.length > 0, 'trace level printed log lines');
    const needles = [
      apiKey,
      apiKey.slice(8, 30),
      wrong,
      'tw_live_guess',
      ...secrets,
      ...secrets.map((s) => s.slice(6, 30)),
      ...Object.values(PII),
      PII.email.toLowerCase(),
      '6505550123',
    ];
    for (const needle of needles) {
      assert.ok(!logs.includes(needle), `found ${needle.slice(0, 12)}… in the logs`);
    }
    console.log(
      `logs: ${logLines.length} lines at trace level searched for ${needles.length} secrets and PII values: 0 found`,
    );
  });
});
