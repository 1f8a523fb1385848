/**
 * One typed schema over the environment, validated at boot. Nothing else reads `process.env`:
 * every knob the service has is listed here with its default (contract §9).
 */
export interface Config {
  /** HTTP port. */
  port: number;
  /** Listen address. */
  host: string;
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`. */
  databaseUrl: string;
  /** PostgreSQL connections each process keeps open (ignored by SQLite). */
  databasePoolSize: number;
  /** When set, rate limits (and caches that must agree across instances) live in Redis. */
  redisUrl: string | undefined;
  /** pino level. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Seconds between webhook delivery attempts after the first. */
  webhookRetrySchedule: number[];
  /** Allow loopback/private webhook destinations (local development, tests). */
  webhookAllowPrivate: boolean;
  /** Allow `http://` webhook destinations. */
  webhookAllowHttp: boolean;
  /** Run the delivery worker inside the API process. */
  worker: boolean;
  /** Take the client IP from `X-Forwarded-For`. */
  trustProxy: boolean;
  /** Rate limits on (the default). `TRACKWAY_RATE_LIMITS=off` exists only for benchmarks. */
  rateLimits: boolean;
}

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function databaseUrl(env: Env): string {
  const raw = env['DATABASE_URL'] || 'sqlite:./data/trackway.db';
  if (/^sqlite:.+/.test(raw) || /^postgres(ql)?:\/\//.test(raw)) return raw;
  throw new ConfigError(
    `DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…, got "${raw}"`,
  );
}

function retrySchedule(env: Env): number[] {
  const raw = env['TRACKWAY_WEBHOOK_RETRY_SCHEDULE'] || '5,300,1800,7200,18000,36000,36000';
  const steps = raw.split(',').map((part) => Number(part.trim()));
  if (steps.length === 0 || steps.some((s) => !Number.isFinite(s) || s < 0 || s > 7 * 86_400)) {
    throw new ConfigError(
      `TRACKWAY_WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds (0 to 604800), got "${raw}"`,
    );
  }
  return steps;
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (env['LOG_LEVEL'] || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return {
    port: integer(env, 'PORT', 8080, 0, 65_535),
    host: env['HOST'] || '127.0.0.1',
    databaseUrl: databaseUrl(env),
    databasePoolSize: integer(env, 'TRACKWAY_DATABASE_POOL_SIZE', 10, 1, 1000),
    redisUrl: env['REDIS_URL'] || undefined,
    logLevel,
    webhookRetrySchedule: retrySchedule(env),
    webhookAllowPrivate: boolean(env, 'TRACKWAY_WEBHOOK_ALLOW_PRIVATE', false),
    webhookAllowHttp: boolean(env, 'TRACKWAY_WEBHOOK_ALLOW_HTTP', false),
    worker: boolean(env, 'TRACKWAY_WORKER', true),
    trustProxy: boolean(env, 'TRACKWAY_TRUST_PROXY', false),
    rateLimits: boolean(env, 'TRACKWAY_RATE_LIMITS', true),
  };
}
