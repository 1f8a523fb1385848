/**
 * Composition root: load config, pick adapters, start HTTP (and, later, the delivery worker).
 */
import type { Logger } from 'pino';
import { type Config, loadConfig } from './config.ts';
import { createSender } from './delivery/sender.ts';
import { DeliveryWorker } from './delivery/worker.ts';
import { createAccount } from './domain/accounts/accounts.ts';
import { CommitSignal } from './domain/commits.ts';
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

/**
 * The embedded default must work at once for a new user: on SQLite with no account yet, make a
 * `pro` account and print its key (once; only its hash is kept). PostgreSQL deployments are set
 * up deliberately with the CLI instead.
 */
async function firstRun(
  config: Config,
  store: Store,
  out: (line: string) => void,
): Promise<string | null> {
  if (!config.databaseUrl.startsWith('sqlite:')) return null;
  if ((await store.accounts.countAccounts()) > 0) return null;
  const { account, apiKey } = await createAccount(
    { store, clock: systemClock },
    { name: 'Default account', plan: 'pro' },
  );
  out('');
  out(`First run: created account ${account.id} on the pro plan.`);
  out('Its API key is shown only this once; keep it secret:');
  out('');
  out(`  ${apiKey}`);
  out('');
  return apiKey;
}

/** Printed once listening, so the address is the real one (PORT=0 picks a free port). */
function tryIt(apiKey: string, address: string, out: (line: string) => void): void {
  out('Try it:');
  out(`  export TRACKWAY_API_KEY=${apiKey}`);
  out(
    `  curl -s -X POST ${address}/v1/pixels -H "Authorization: Bearer $TRACKWAY_API_KEY" -H 'Content-Type: application/json' -d '{"name":"My shop","domain":"shop.example.com"}'`,
  );
  out('');
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
  options: { metrics?: Metrics; commits?: CommitSignal } = {},
): RunningWorker {
  const { metrics, commits } = options;
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
  // Woken at once by every commit of this process that wrote webhook messages.
  commits?.onOutboxWritten(worker.wake);
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
  options: { logger?: Logger; out?: (line: string) => void } = {},
): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const commits = new CommitSignal();
  const store = await openStore(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    commits,
  });
  await store.migrate();
  // The key is printed before listening: if the port is taken, it is not lost with the process.
  const firstKey = await firstRun(config, store, out);
  const metrics = createMetrics();
  const worker = config.worker
    ? startWorker(config, store, logger, { metrics, commits })
    : undefined;
  const rateLimiter = await createRateLimiter(config, logger);
  const app = await buildApp({
    metrics,
    store,
    clock: systemClock,
    config,
    logger,
    rateLimiter,
    commits,
  });
  const address = await app.listen({ port: config.port, host: config.host });
  logger.info({ address, database: config.databaseUrl.split(':')[0] }, 'trackway listening');
  if (firstKey) tryIt(firstKey, address, out);
  out(`Trackway is listening on ${address}`);
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
