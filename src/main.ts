/**
 * Composition root: load config, pick adapters, start HTTP (and, later, the delivery worker).
 */
import type { Logger } from 'pino';
import { type Config, loadConfig } from './config.ts';
import { createSender } from './delivery/sender.ts';
import { DeliveryWorker } from './delivery/worker.ts';
import { createAccount } from './domain/accounts/accounts.ts';
import { type RateLimiter, type Store, systemClock } from './domain/ports.ts';
import { buildApp } from './http/app.ts';
import type { Metrics } from './http/metrics.ts';
import { createMetrics } from './http/metrics.ts';
import { createLogger } from './logger.ts';
import { FailOpenRateLimiter } from './rate-limit/fail-open.ts';
import { MemoryRateLimiter } from './rate-limit/memory.ts';
import { connectRedis, RedisRateLimiter, redisReady } from './rate-limit/redis.ts';
import { openStore } from './storage/index.ts';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

interface FirstRun {
  accountId: string;
  apiKey: string;
}

/**
 * The embedded default must work at once for a new user: on SQLite with no account yet, make a
 * `pro` account whose key the banner prints (once; only its hash is kept). PostgreSQL
 * deployments are set up deliberately with the CLI instead.
 */
async function firstRun(config: Config, store: Store): Promise<FirstRun | null> {
  if (!config.databaseUrl.startsWith('sqlite:')) return null;
  if ((await store.accounts.countAccounts()) > 0) return null;
  const { account, apiKey } = await createAccount(
    { store, clock: systemClock },
    { name: 'Default account', plan: 'pro' },
  );
  return { accountId: account.id, apiKey };
}

function firstRunJson({ accountId, apiKey }: FirstRun) {
  return { first_run: { account_id: accountId, api_key: apiKey } };
}

function firstRunText({ accountId, apiKey }: FirstRun): string[] {
  return [
    '',
    `First run: created account ${accountId} on the pro plan.`,
    'Its API key is shown only this once; keep it secret:',
    '',
    `  ${apiKey}`,
    '',
  ];
}

/**
 * Printed once listening, as one block (a single write, so no log line lands inside it), with
 * the real address (PORT=0 picks a free port).
 */
function banner(first: FirstRun | null, address: string): string {
  const tryIt = first
    ? [
        'Try it:',
        `  export TRACKWAY_URL=${address}`,
        `  export TRACKWAY_API_KEY=${first.apiKey}`,
        `  curl -s -X POST "$TRACKWAY_URL/v1/pixels" -H "Authorization: Bearer $TRACKWAY_API_KEY" -H 'Content-Type: application/json' -d '{"name":"My shop","domain":"shop.example.com"}'`,
        '',
      ]
    : [];
  return [
    ...(first ? firstRunText(first) : []),
    ...tryIt,
    `Trackway is listening on ${address}`,
  ].join('\n');
}

export interface RunningWorker {
  wake(): void;
  stop(): Promise<void>;
}

/** The delivery worker with its HTTP client; stopping it waits for attempts in flight. */
export function startWorker(
  config: Config,
  store: Store,
  logger: Logger,
  metrics?: Metrics,
): RunningWorker {
  const sender = createSender({
    allowPrivate: config.webhookAllowPrivate,
    allowHttp: config.webhookAllowHttp,
  });
  const worker = new DeliveryWorker({
    store: store.webhooks,
    clock: systemClock,
    sender,
    logger,
    schedule: config.webhookRetrySchedule,
    ...(metrics && { metrics }),
  });
  worker.start();
  return {
    wake: worker.wake,
    async stop() {
      await worker.stop();
      await sender.close();
    },
  };
}

/**
 * In memory without Redis; with Redis, shared and exact across instances, falling back to memory
 * while Redis is unreachable. `null` only when limits are switched off (benchmarks).
 */
export async function createRateLimiter(
  config: Config,
  logger: Logger,
): Promise<RateLimiter | null> {
  if (!config.rateLimits) {
    logger.warn('TRACKWAY_RATE_LIMITS=off: requests are not rate limited (benchmarks only)');
    return null;
  }
  if (config.redisUrl === undefined) return new MemoryRateLimiter();
  const redis = connectRedis(config.redisUrl);
  // Start even when Redis is not there (fail open), but give it a moment first.
  if (!(await redisReady(redis, 2_000))) {
    logger.warn('Redis not reachable at start: rate limits are per instance until it answers');
  }
  return new FailOpenRateLimiter(new RedisRateLimiter(redis), new MemoryRateLimiter(), logger);
}

export async function startServer(
  config: Config = loadConfig(),
  options: {
    logger?: Logger;
    /** Where the banner goes (stdout by default): one call with the whole block. */
    out?: (text: string) => void;
    /** The banner as one JSON object (`trackway serve --json`). */
    json?: boolean;
  } = {},
): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const out = options.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const store = await openStore(config.databaseUrl, { poolSize: config.databasePoolSize });
  await store.migrate();
  const first = await firstRun(config, store);
  const metrics = createMetrics();
  const worker = config.worker ? startWorker(config, store, logger, metrics) : undefined;
  const rateLimiter = await createRateLimiter(config, logger);
  const app = await buildApp({
    metrics,
    store,
    clock: systemClock,
    config,
    logger,
    rateLimiter,
    ...(worker && { onOutboxWrite: worker.wake }),
  });
  const database = config.databaseUrl.split(':')[0];
  let address: string;
  try {
    address = await app.listen({
      port: config.port,
      host: config.host,
      // Fastify's own line, once per bound address; the banner is the one that says
      // "listening", so the log and the banner do not repeat each other.
      listenTextResolver: (bound) => `trackway serving ${bound} (${database})`,
    });
  } catch (error) {
    // The first-run key exists only in this process: if the port is taken, it must not be
    // lost with it.
    if (first)
      out(options.json ? JSON.stringify(firstRunJson(first)) : firstRunText(first).join('\n'));
    throw error;
  }
  out(
    options.json
      ? JSON.stringify({ listening: address, ...(first && firstRunJson(first)) })
      : banner(first, address),
  );
  let closing: Promise<void> | undefined;
  return {
    url: address,
    close() {
      // Stop accepting, let in-flight requests finish (their commits included), then close
      // storage. Idempotent: a second signal waits for the first drain.
      closing ??= (async () => {
        await app.close();
        await worker?.stop();
        await rateLimiter?.close();
        await store.close();
      })();
      return closing;
    },
  };
}
