/**
 * One TypeBox schema over the environment, validated at boot. Nothing else reads `process.env`:
 * every knob the service has is a property of `ConfigSchema` below, with its default and its
 * documentation (contract §9); the README's configuration table is rendered from it
 * (`configurationTable()`, checked by `config.test.ts`). Each value is parsed here, once, into
 * the form the code uses (`DATABASE_URL` into `{kind, …}`), so no other place re-checks one.
 *
 * Adding a variable is one property: `setting({ default, description, accepts }, decode)`.
 */
import { isIP } from 'node:net';
import { type StaticDecode, type TSchema, Type } from '@sinclair/typebox';
import { TransformDecodeError, Value } from '@sinclair/typebox/value';
import {
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
} from './domain/forwarding/platforms/registry.ts';
import { maskCredentials } from './redact.ts';

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Where the data lives: the one parse of `DATABASE_URL` (contract §8). */
export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** How many proxies stand in front (`false`: none), or their addresses/CIDRs (contract §7). */
export type TrustedProxies = false | number | readonly string[];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

interface SettingDoc {
  /** The value used when the variable is unset or empty; none means "unset". */
  default?: string;
  /** What it does, for the README table. */
  description: string;
  /** What a valid value looks like, for the error message ("PORT must be …"). */
  accepts: string;
}

/**
 * One environment variable: a string in, `decode`'s result out. `decode` throws a plain Error
 * when the text is not acceptable; `loadConfig` turns it into a ConfigError naming the variable.
 */
function setting<T>(doc: SettingDoc, decode: (raw: string) => T) {
  const schema = Type.Transform(
    Type.String({
      description: doc.description,
      'x-accepts': doc.accepts,
      ...(doc.default !== undefined && { default: doc.default }),
    }),
  )
    .Decode(decode)
    .Encode((value) => String(value));
  return doc.default === undefined ? Type.Optional(schema) : schema;
}

function integerIn(min: number, max: number) {
  return (raw: string): number => {
    const value = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(value) || value < min || value > max) throw new Error('out of range');
    return value;
  };
}

function flag(raw: string): boolean {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error('not a boolean');
}

/** `new URL` without the throw (Node 20 has no `URL.parse`). */
function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

function databaseTarget(raw: string): DatabaseTarget {
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length);
    if (path === '') throw new Error('no path');
    return { kind: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    const url = parseUrl(raw);
    if (url === null || url.hostname === '' || url.pathname.length < 2) {
      throw new Error('not a URL');
    }
    return { kind: 'postgres', url: raw };
  }
  throw new Error('unsupported scheme');
}

const INGEST_CHOICES = ['auto', 'statement', 'per-account'] as const;
/** PostgreSQL's ingest path, or `auto` (storage/postgres/ingest-path.ts). */
export type IngestChoice = (typeof INGEST_CHOICES)[number];

function ingestChoice(raw: string): IngestChoice {
  if (!(INGEST_CHOICES as readonly string[]).includes(raw)) throw new Error('not a choice');
  return raw as IngestChoice;
}

function redisUrl(raw: string): string {
  const url = parseUrl(raw);
  if (url === null || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '') {
    throw new Error('not a redis URL');
  }
  return raw;
}

/** `1.2.3.4`, `::1`, `10.0.0.0/8`, `fd00::/8`. */
function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return bits >= 0 && bits <= (family === 4 ? 32 : 128);
}

function trustedProxies(raw: string): TrustedProxies {
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return 1;
  if (/^\d{1,3}$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.length === 0 || !entries.every(isAddressOrCidr)) throw new Error('not a list');
  return entries;
}

/** A platform's base-URL variable, `TRACKWAY_<TYPE>_API_URL` (each module names its own). */
type PlatformUrlKey = `TRACKWAY_${string}_API_URL`;
/** A platform's OAuth token URL variable (`TRACKWAY_GOOGLE_OAUTH_URL` …). */
type TokenUrlKey = `TRACKWAY_${string}_OAUTH_URL`;
const baseUrlSetting = (doc: SettingDoc) => setting(doc, baseUrl);

function baseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  return raw.replace(/\/+$/, '');
}

function retrySchedule(raw: string): number[] {
  const steps = raw.split(',').map((part) => (part.trim() === '' ? Number.NaN : Number(part)));
  if (steps.some((s) => !Number.isFinite(s) || s < 0 || s > 7 * 86_400)) {
    throw new Error('not a schedule');
  }
  return steps;
}

function processCount(raw: string): number | 'auto' {
  if (raw === 'auto') return 'auto';
  return integerIn(1, 256)(raw);
}

function logLevel(raw: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new Error('not a level');
  return raw as LogLevel;
}

/** Hostnames and addresses; whether it resolves is checked at start, before anything opens. */
function host(raw: string): string {
  if (!/^[A-Za-z0-9.:_%-]+$/.test(raw) && !/^\[[0-9A-Fa-f:.]+\]$/.test(raw)) {
    throw new Error('not a host');
  }
  return raw.replace(/^\[(.*)\]$/, '$1');
}

export const ConfigSchema = Type.Object({
  PORT: setting(
    { default: '8080', description: 'HTTP port', accepts: 'an integer from 0 to 65535' },
    integerIn(0, 65_535),
  ),
  HOST: setting(
    {
      default: '127.0.0.1',
      description: 'listen address (`0.0.0.0` for every interface)',
      accepts: 'a host name or an IP address',
    },
    host,
  ),
  DATABASE_URL: setting(
    {
      default: 'sqlite:./data/trackway.db',
      description: '`sqlite:<path>`, `sqlite::memory:` or `postgres://…` (also `postgresql://`)',
      accepts: 'sqlite:<path>, sqlite::memory: or a postgres:// URL',
    },
    databaseTarget,
  ),
  TRACKWAY_DATABASE_POOL_SIZE: setting(
    {
      default: '10',
      description: 'PostgreSQL connections per process',
      accepts: 'an integer from 1 to 1000',
    },
    integerIn(1, 1_000),
  ),
  TRACKWAY_PG_INGEST: setting(
    {
      default: 'auto',
      description:
        'how PostgreSQL writes events: `statement` (one statement a batch), `per-account` (a transaction per account, for Citus), or `auto` (`per-account` on Citus)',
      accepts: 'auto, statement or per-account',
    },
    ingestChoice,
  ),
  REDIS_URL: setting(
    {
      description: 'Redis for rate limits shared across instances (`redis://` or `rediss://`)',
      accepts: 'a redis:// or rediss:// URL with a host',
    },
    redisUrl,
  ),
  LOG_LEVEL: setting(
    {
      default: 'info',
      description:
        'pino level (`silent` to turn logs off; `debug` and `trace` also log every request)',
      accepts: `one of ${LOG_LEVELS.join(', ')}`,
    },
    logLevel,
  ),
  TRACKWAY_WEBHOOK_RETRY_SCHEDULE: setting(
    {
      default: '5,300,1800,7200,18000,36000,36000',
      description: 'seconds between webhook attempts after the first',
      accepts: 'comma-separated seconds (0 to 604800)',
    },
    retrySchedule,
  ),
  TRACKWAY_FORWARD_RETRY_SCHEDULE: setting(
    {
      default: '5,300,1800,7200,18000,36000,36000',
      description:
        "seconds between forwarding attempts after the first (while the event is inside the platform's window)",
      accepts: 'comma-separated seconds (0 to 604800)',
    },
    retrySchedule,
  ),
  // One base URL per platform, declared by its module (the operator's: not subject to the
  // webhook SSRF rules).
  ...(Object.fromEntries(
    PLATFORMS.map((type) => {
      const { env, default: url, description } = PLATFORM_MODULES[type].baseUrl;
      return [env, baseUrlSetting({ default: url, description, accepts: 'an http(s) URL' })];
    }),
  ) as Record<PlatformUrlKey, ReturnType<typeof baseUrlSetting>>),
  // The token URL of each platform whose access token the service obtains (OAuth), declared by
  // its module the same way.
  ...(Object.fromEntries(
    PLATFORMS.flatMap((type) => {
      const auth = PLATFORM_MODULES[type].auth;
      if (!auth) return [];
      const { env, default: url, description } = auth.tokenUrl;
      return [[env, baseUrlSetting({ default: url, description, accepts: 'an http(s) URL' })]];
    }),
  ) as Record<TokenUrlKey, ReturnType<typeof baseUrlSetting>>),
  TRACKWAY_WEBHOOK_ALLOW_PRIVATE: setting(
    {
      default: 'false',
      description: 'allow loopback/private webhook destinations (development)',
      accepts: 'true or false',
    },
    flag,
  ),
  TRACKWAY_WEBHOOK_ALLOW_HTTP: setting(
    {
      default: 'false',
      description: 'allow `http://` webhook destinations',
      accepts: 'true or false',
    },
    flag,
  ),
  TRACKWAY_WORKER: setting(
    {
      default: 'true',
      description: 'run the webhook delivery and forwarding workers inside the API process',
      accepts: 'true or false',
    },
    flag,
  ),
  TRACKWAY_TRUST_PROXY: setting(
    {
      default: 'false',
      description:
        'proxies in front: their number (`true` = 1) or their addresses/CIDRs, comma-separated; the client IP is then the rightmost `X-Forwarded-For` address no trusted proxy added',
      accepts: 'false, true, a number of proxies, or a comma list of IP addresses/CIDRs',
    },
    trustedProxies,
  ),
  TRACKWAY_PROCESSES: setting(
    {
      default: 'auto',
      description:
        'HTTP processes `serve` runs (node:cluster, one port): `auto`, one per core on PostgreSQL and one on SQLite (one writer per file), or a number (`1` for a single process)',
      accepts: 'auto or an integer from 1 to 256 (1 with SQLite)',
    },
    processCount,
  ),
  TRACKWAY_RATE_LIMITS: setting(
    {
      default: 'on',
      description: '`off` disables rate limiting: for benchmarks only',
      accepts: 'on or off',
    },
    flag,
  ),
});

type Settings = StaticDecode<typeof ConfigSchema>;

/** The decoded configuration, in the names the code uses. */
export interface Config {
  port: number;
  host: string;
  database: DatabaseTarget;
  databasePoolSize: number;
  /** PostgreSQL's ingest path (storage/postgres/ingest-path.ts). */
  pgIngest: IngestChoice;
  redisUrl: string | undefined;
  logLevel: LogLevel;
  webhookRetrySchedule: number[];
  forwardRetrySchedule: number[];
  platformUrls: Record<Platform, string>;
  /** Token URLs of the platforms whose module declares `auth`. */
  tokenUrls: Partial<Record<Platform, string>>;
  webhookAllowPrivate: boolean;
  webhookAllowHttp: boolean;
  worker: boolean;
  trustProxy: TrustedProxies;
  rateLimits: boolean;
  /** `serve`'s HTTP processes as asked: `auto` is decided by `processesFor` at start. */
  processes: number | 'auto';
}

function fromSettings(s: Settings): Config {
  return {
    port: s.PORT,
    host: s.HOST,
    database: s.DATABASE_URL,
    databasePoolSize: s.TRACKWAY_DATABASE_POOL_SIZE,
    pgIngest: s.TRACKWAY_PG_INGEST,
    redisUrl: s.REDIS_URL,
    logLevel: s.LOG_LEVEL,
    webhookRetrySchedule: s.TRACKWAY_WEBHOOK_RETRY_SCHEDULE,
    forwardRetrySchedule: s.TRACKWAY_FORWARD_RETRY_SCHEDULE,
    platformUrls: Object.fromEntries(
      PLATFORMS.map((type) => [
        type,
        (s as unknown as Record<PlatformUrlKey, string>)[
          PLATFORM_MODULES[type].baseUrl.env as PlatformUrlKey
        ],
      ]),
    ) as Record<Platform, string>,
    tokenUrls: Object.fromEntries(
      PLATFORMS.flatMap((type) => {
        const auth = PLATFORM_MODULES[type].auth;
        if (!auth) return [];
        return [
          [type, (s as unknown as Record<TokenUrlKey, string>)[auth.tokenUrl.env as TokenUrlKey]],
        ];
      }),
    ),
    webhookAllowPrivate: s.TRACKWAY_WEBHOOK_ALLOW_PRIVATE,
    webhookAllowHttp: s.TRACKWAY_WEBHOOK_ALLOW_HTTP,
    worker: s.TRACKWAY_WORKER,
    trustProxy: s.TRACKWAY_TRUST_PROXY,
    rateLimits: s.TRACKWAY_RATE_LIMITS,
    processes: s.TRACKWAY_PROCESSES,
  };
}

const properties = ConfigSchema.properties as Record<string, TSchema>;

/** Validates every variable at once; the first one that is wrong is named in a ConfigError. */
export function loadConfig(env: Env = process.env): Config {
  const given: Record<string, string> = {};
  for (const name of Object.keys(properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') given[name] = raw;
  }
  const input = Value.Default(ConfigSchema, given);
  let config: Config;
  try {
    config = fromSettings(Value.Decode(ConfigSchema, input));
  } catch (error) {
    if (error instanceof TransformDecodeError) {
      const name = error.path.replace(/^\//, '');
      const accepts = (properties[name] as { 'x-accepts'?: string } | undefined)?.['x-accepts'];
      throw new ConfigError(
        `${name} must be ${accepts}, got "${maskCredentials(String(error.value))}"`,
      );
    }
    throw error;
  }
  // One writer per SQLite file, and its live tail and WAL flushes are in-process
  // (storage/sqlite): several processes on one file would serialise on its lock and miss each
  // other's commits on live-tail streams.
  if (config.database.kind === 'sqlite' && config.processes !== 'auto' && config.processes > 1) {
    throw new ConfigError(
      `TRACKWAY_PROCESSES must be 1 or auto with SQLite (one writer per file), got "${config.processes}": use PostgreSQL for more processes`,
    );
  }
  return config;
}

/**
 * How many HTTP processes `serve` runs on a machine with `cores` cores: `auto` is one per core
 * on PostgreSQL and one on SQLite, whose single writer gains nothing from more
 * (docs/decisions.md, "Ingest on every core").
 */
export function processesFor(config: Config, cores: number): number {
  if (config.processes !== 'auto') return config.processes;
  return config.database.kind === 'sqlite' ? 1 : Math.max(1, cores);
}

/** Whether start-up failures print their stack: only when an operator asked for debug logs. */
export function wantsStackTraces(env: Env = process.env): boolean {
  return env['LOG_LEVEL'] === 'debug' || env['LOG_LEVEL'] === 'trace';
}

/** The README's configuration table, rendered from the schema (checked by config.test.ts). */
export function configurationTable(): string {
  const rows = Object.entries(properties).map(([name, schema]) => {
    const { default: fallback, description } = schema as { default?: string; description: string };
    return [`\`${name}\``, fallback === undefined ? 'unset' : `\`${fallback}\``, description];
  });
  const header = ['variable', 'default', 'meaning'];
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [
    line(header),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...rows.map(line),
  ].join('\n');
}
