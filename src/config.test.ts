/**
 * The configuration schema: every variable parsed once at boot, every mistake named, no
 * credential echoed, and the README's table the schema's own.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ConfigError, configurationTable, loadConfig, processesFor } from './config.ts';
import { PLATFORM_MODULES, PLATFORMS } from './domain/forwarding/platforms/registry.ts';
import { maskCredentials } from './redact.ts';

const refused = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
};

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    assert.deepEqual(config, {
      port: 8080,
      host: '127.0.0.1',
      database: { kind: 'sqlite', path: './data/trackway.db' },
      databasePoolSize: 10,
      pgIngest: 'auto',
      redisUrl: undefined,
      logLevel: 'info',
      webhookRetrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
      forwardRetrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
      // Each module's own default (its module cites it): this checks they are what config reads.
      platformUrls: Object.fromEntries(
        PLATFORMS.map((type) => [type, PLATFORM_MODULES[type].baseUrl.default]),
      ),
      tokenUrls: Object.fromEntries(
        PLATFORMS.flatMap((type) => {
          const auth = PLATFORM_MODULES[type].auth;
          return auth ? [[type, auth.tokenUrl.default]] : [];
        }),
      ),
      webhookAllowPrivate: false,
      webhookAllowHttp: false,
      worker: true,
      trustProxy: false,
      rateLimits: true,
      processes: 'auto',
    });
  });

  it('parses DATABASE_URL once into the store to open', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database, {
      kind: 'sqlite',
      path: ':memory:',
    });
    const url = 'postgresql://u:p@db.internal:5432/trackway?schema=tw';
    assert.deepEqual(loadConfig({ DATABASE_URL: url }).database, { kind: 'postgres', url });
  });

  it('names the variable and what it accepts', () => {
    assert.equal(refused({ PORT: '80a' }), 'PORT must be an integer from 0 to 65535, got "80a"');
    assert.match(refused({ LOG_LEVEL: 'loud' }), /^LOG_LEVEL must be one of fatal, /);
    assert.match(refused({ TRACKWAY_WORKER: 'maybe' }), /^TRACKWAY_WORKER must be true or false/);
    assert.match(refused({ TRACKWAY_WEBHOOK_RETRY_SCHEDULE: '5,,6' }), /^TRACKWAY_WEBHOOK_RETRY/);
    assert.match(refused({ HOST: 'exa mple' }), /^HOST must be a host name or an IP address/);
    assert.equal(
      refused({ TRACKWAY_PG_INGEST: 'citus' }),
      'TRACKWAY_PG_INGEST must be auto, statement or per-account, got "citus"',
    );
    assert.equal(loadConfig({ TRACKWAY_PG_INGEST: 'per-account' }).pgIngest, 'per-account');
    assert.match(refused({ DATABASE_URL: 'sqlite:' }), /^DATABASE_URL must be sqlite:<path>/);
  });

  it('refuses a REDIS_URL that is not a redis URL, before anything connects', () => {
    assert.match(
      refused({ REDIS_URL: 'notaurl' }),
      /^REDIS_URL must be a redis:\/\/ or rediss:\/\//,
    );
    assert.match(refused({ REDIS_URL: 'http://cache:6379' }), /^REDIS_URL must be/);
    // An unclosed IPv6 bracket made ioredis throw a stack trace at connect time.
    const message = refused({ REDIS_URL: 'redis://x@[::1:6379' });
    assert.equal(
      message,
      'REDIS_URL must be a redis:// or rediss:// URL with a host, got "redis://***@[::1:6379"',
    );
    assert.equal(
      loadConfig({ REDIS_URL: 'rediss://:pw@cache:6380/2' }).redisUrl,
      'rediss://:pw@cache:6380/2',
    );
  });

  it('never echoes a password or a key in a configuration error', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ DATABASE_URL: 'mysql://trackway:hunter2secret@db/trackway' }, 'hunter2secret'],
      [{ DATABASE_URL: 'postgres://trackway:hunter2secret@/' }, 'hunter2secret'],
      [{ DATABASE_URL: 'mysql://db/trackway?password=hunter2secret' }, 'hunter2secret'],
      [{ REDIS_URL: 'redis://hunter2secret@[::1' }, 'hunter2secret'],
      [{ REDIS_URL: 'http://default:hunter2secret@cache' }, 'hunter2secret'],
      [{ HOST: 'tw_live_0123456789abcdefABCDEF0123456789abcdefABCDEF0 ' }, 'tw_live_0123'],
    ];
    for (const [env, secret] of cases) {
      const message = refused(env);
      assert.ok(!message.includes(secret), message);
      assert.ok(message.startsWith(Object.keys(env)[0]!), message);
    }
    assert.equal(
      maskCredentials('postgres://trackway:hunter2@db:5432/tw'),
      'postgres://trackway:***@db:5432/tw',
    );
  });

  it('reads TRACKWAY_TRUST_PROXY as a number of proxies or a list of their addresses', () => {
    const trust = (value: string) => loadConfig({ TRACKWAY_TRUST_PROXY: value }).trustProxy;
    assert.equal(trust('false'), false);
    assert.equal(trust('0'), false);
    assert.equal(trust('true'), 1, '`true` is one proxy, never "believe the first entry"');
    assert.equal(trust('2'), 2);
    assert.deepEqual(trust('10.0.0.0/8, 192.168.1.7,fd00::/8'), [
      '10.0.0.0/8',
      '192.168.1.7',
      'fd00::/8',
    ]);
    assert.match(refused({ TRACKWAY_TRUST_PROXY: '10.0.0.0/33' }), /^TRACKWAY_TRUST_PROXY must be/);
    assert.match(refused({ TRACKWAY_TRUST_PROXY: 'loadbalancer' }), /^TRACKWAY_TRUST_PROXY/);
  });

  it('reads TRACKWAY_PROCESSES: auto by default, one per core on PostgreSQL and one on SQLite', () => {
    const pg = { DATABASE_URL: 'postgres://db/tw' };
    assert.equal(processesFor(loadConfig(pg), 8), 8, 'every core unless asked');
    assert.equal(processesFor(loadConfig({ ...pg, TRACKWAY_PROCESSES: 'auto' }), 8), 8);
    assert.equal(
      processesFor(loadConfig({ TRACKWAY_PROCESSES: 'auto' }), 8),
      1,
      'SQLite: one writer',
    );
    assert.equal(processesFor(loadConfig({}), 8), 1, 'SQLite: one writer');
    assert.equal(processesFor(loadConfig({ ...pg, TRACKWAY_PROCESSES: '1' }), 8), 1);
    assert.equal(processesFor(loadConfig({ ...pg, TRACKWAY_PROCESSES: '3' }), 8), 3);
    assert.equal(processesFor(loadConfig({ TRACKWAY_PROCESSES: '1' }), 8), 1);
    assert.match(refused({ ...pg, TRACKWAY_PROCESSES: '0' }), /^TRACKWAY_PROCESSES must be/);
    assert.match(refused({ ...pg, TRACKWAY_PROCESSES: 'all' }), /^TRACKWAY_PROCESSES must be/);
    assert.match(
      refused({ TRACKWAY_PROCESSES: '2' }),
      /^TRACKWAY_PROCESSES must be 1 or auto with SQLite/,
    );
  });

  it("is the README's configuration table", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = configurationTable();
    assert.ok(
      readme.includes(table),
      `README.md's configuration table differs from the schema; paste this:\n\n${table}\n`,
    );
  });
});
