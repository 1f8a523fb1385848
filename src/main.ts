/**
 * Composition root: load config, pick adapters, start HTTP (and, later, the delivery worker).
 */

import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { createAccessTokens } from './delivery/access-tokens.ts';
import { ForwardingWorker } from './delivery/forwarding-worker.ts';
import { createPlatformGateway, createPlatformSender } from './delivery/platform-sender.ts';
import { createSender } from './delivery/sender.ts';
import { DeliveryWorker } from './delivery/worker.ts';
import { createAccount } from './domain/accounts/accounts.ts';
import { CommitSignal } from './domain/commits.ts';
import { startMatchKeysSweep } from './domain/lifecycle/match-keys-sweep.ts';
import { startPurgeJob } from './domain/lifecycle/retention.ts';
import { systemClock } from './domain/ports/clock.ts';
import type { RateLimiter } from './domain/ports/rate-limiter.ts';
import type { Store } from './domain/ports/store.ts';
import { boundHeapGrowth } from './heap.ts';
import { buildApp } from './http/app.ts';
import type { Metrics } from './http/metrics.ts';
import { createMetrics } from './http/metrics.ts';
import { createLogger } from './logger.ts';
import { FailOpenRateLimiter } from './rate-limit/fail-open.ts';
import { MemoryRateLimiter } from './rate-limit/memory.ts';
import { connectRedis, RedisRateLimiter, redisReady, redisTarget } from './rate-limit/redis.ts';
import { RedisStreamSlots, type StreamSlots } from './rate-limit/stream-slots.ts';
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
  if (config.database.kind !== 'sqlite') return null;
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

/**
 * On a sharded database (Citus), the least time between two looks for due work that commits
 * start: each look reads every shard, and at ingest rates a commit that queued work comes every
 * few milliseconds. 100 ms keeps forwarding and webhooks within a tenth of a second of the
 * commit while bounding those reads to ten a second a worker, whatever the ingest rate.
 */
export const SHARDED_WAKE_GAP_MS = 100;

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
  // On Citus each look reads every shard: commits wake a worker at most every so often.
  const wakeGapMs = store.sharded ? SHARDED_WAKE_GAP_MS : 0;
  const worker = new DeliveryWorker({
    store: store.webhooks,
    wakeGapMs,
    clock: systemClock,
    sender,
    logger,
    schedule: config.webhookRetrySchedule,
    ...(metrics && { metrics }),
  });
  worker.start();
  // Woken at once by every commit of this process that wrote webhook messages.
  commits?.onOutboxWritten(worker.wake);
  // Forwarding to ad platforms: the same model, its own loop, so a slow platform never holds
  // a webhook delivery back (nor the other way round).
  const platformSender = createPlatformSender();
  // OAuth access tokens (Google Ads, LinkedIn): in this process's memory only.
  const tokens = createAccessTokens({ urls: config.tokenUrls });
  const forwarder = new ForwardingWorker({
    store: store.forwarding,
    wakeGapMs,
    source: store.matchKeys,
    clock: systemClock,
    sender: platformSender,
    logger,
    schedule: config.forwardRetrySchedule,
    baseUrls: config.platformUrls,
    tokens,
    ...(metrics && { metrics }),
  });
  forwarder.start();
  commits?.onForwardingQueued(forwarder.wake);
  commits?.onReplayAccepted(forwarder.wakeReplays);
  return {
    wake: () => {
      worker.wake();
      forwarder.wake();
    },
    async stop() {
      await Promise.all([worker.stop(), forwarder.stop()]);
      await Promise.all([sender.close(), platformSender.close(), tokens.close()]);
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
  metrics?: Pick<Metrics, 'rateLimitFallback'>,
  /** The count without Redis: this process's own, or (several processes) the primary's. */
  local: RateLimiter = new MemoryRateLimiter(),
): Promise<RateLimiter | null> {
  if (!config.rateLimits) {
    logger.warn('TRACKWAY_RATE_LIMITS=off: requests are not rate limited (benchmarks only)');
    return null;
  }
  if (config.redisUrl === undefined) return local;
  const redis = connectRedis(config.redisUrl);
  // Start even when Redis is not there (fail open), but give it a moment first.
  const ready = await redisReady(redis, 2_000);
  const target = redisTarget(config.redisUrl);
  if (!ready) {
    logger.warn(
      `Redis at ${target} not reachable at start: rate limits are per instance until it answers`,
    );
  }
  return new FailOpenRateLimiter(new RedisRateLimiter(redis), local, logger, {
    degraded: !ready,
    target,
    ...(metrics && { fallback: metrics.rateLimitFallback }),
  });
}

/**
 * HOST must name an address of this machine: checked before anything is opened, so a typo
 * stops the process at once instead of after the store and the worker are up.
 */
async function checkHost(host: string): Promise<void> {
  try {
    await lookup(host);
  } catch {
    throw new ConfigError(`HOST "${host}" could not be resolved to an address`);
  }
}

/** A listen failure in the operator's words, naming the variable to change. */
function listenError(error: NodeJS.ErrnoException, config: Config): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `PORT ${config.port} is already in use on ${config.host}: stop the other process or choose another PORT`,
      );
    case 'EACCES':
      return new ConfigError(`PORT ${config.port} needs privileges this process does not have`);
    case 'EADDRNOTAVAIL':
      return new ConfigError(`HOST "${config.host}" is not an address of this machine`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`HOST "${config.host}" could not be resolved to an address`);
    default:
      return error;
  }
}

/**
 * Writes to stdout that stop quietly once its reader has gone (`trackway serve | head -5`):
 * without this, the first write after `head` exits raises EPIPE as an uncaught error.
 */
export function stdoutLines(): (line: string) => void {
  let open = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') open = false;
    else throw error;
  });
  return (line) => {
    if (open) process.stdout.write(`${line}\n`);
  };
}

/**
 * Validates everything before opening anything (config is already parsed; HOST is resolved
 * here), then opens store, worker, rate limiter and HTTP in that order. Any failure on the way
 * closes what was opened, in reverse, and rethrows: the CLI prints one line and exits non-zero.
 */
export async function startServer(
  config: Config = loadConfig(),
  options: {
    logger?: Logger;
    /** Where the banner goes (stdout by default): one call with the whole block. */
    out?: (text: string) => void;
    /** The banner as one JSON object (`trackway serve --json`). */
    json?: boolean;
    /**
     * One of several HTTP processes (TRACKWAY_PROCESSES): limits and live-tail stream slots
     * counted by the primary for all of them, where Redis does not count them.
     */
    shared?: RateLimiter & StreamSlots & { metrics(): Promise<string> };
  } = {},
): Promise<RunningServer> {
  // Before anything big is allocated: batches would otherwise let the heap grow to 4× live.
  boundHeapGrowth();
  const logger = options.logger ?? createLogger(config.logLevel);
  const out = options.out ?? stdoutLines();
  await checkHost(config.host);
  const opened: Array<() => Promise<void>> = [];
  // Newest first; every one is closed even if an earlier one fails, then the first failure
  // is reported.
  const closeOpened = async () => {
    let failure: unknown;
    for (const close of opened.splice(0).reverse()) {
      await close().catch((error: unknown) => {
        failure ??= error;
      });
    }
    if (failure !== undefined) throw failure;
  };
  try {
    const commits = new CommitSignal();
    const store = await openStore(config.database, {
      poolSize: config.databasePoolSize,
      ingest: config.pgIngest,
      commits,
    });
    opened.push(() => store.close());
    await store.migrate();
    const first = await firstRun(config, store);
    const metrics = createMetrics({ logger });
    if (options.shared) {
      // The primary asks every process for these when a scrape comes (prom-client's protocol).
      AggregatorRegistry.setRegistries([metrics.registry]);
      new AggregatorRegistry();
    }
    const worker = config.worker
      ? startWorker(config, store, logger, { metrics, commits })
      : undefined;
    if (worker) opened.push(() => worker.stop());
    // Retention (contract §15): within a minute of start, then hourly, in small batches.
    const stopPurge = startPurgeJob(
      { store, clock: systemClock },
      {
        purged: (deleted) => {
          if (deleted > 0) logger.info({ deleted }, 'events past retention purged');
        },
        failed: (error) => logger.warn({ err: error }, 'retention purge failed; next in an hour'),
      },
    );
    opened.push(stopPurge);
    // Raw match keys (contract §11): erased once 7 days past the event, swept every 5 minutes.
    const stopSweep = startMatchKeysSweep(
      { store, clock: systemClock },
      {
        erased: (deleted) => {
          if (deleted > 0) logger.info({ deleted }, 'expired raw match keys erased');
        },
        failed: (error) =>
          logger.warn({ err: error }, 'match keys sweep failed; next in 5 minutes'),
      },
    );
    opened.push(stopSweep);
    const rateLimiter = await createRateLimiter(config, logger, metrics, options.shared);
    if (rateLimiter) opened.push(() => rateLimiter.close());
    // Live-tail streams per account (contract §21): counted across instances in Redis, else by
    // the primary of several processes, else in this process.
    let streamSlots: StreamSlots | undefined = options.shared;
    if (config.redisUrl !== undefined) {
      const redis = connectRedis(config.redisUrl);
      opened.push(async () => {
        redis.disconnect();
      });
      let warned = false;
      streamSlots = new RedisStreamSlots(redis, (error) => {
        if (warned) return;
        warned = true;
        logger.warn({ err: error }, 'Redis not answering: live-tail streams counted per instance');
      });
    }
    // Destination test sends go where the worker sends (TRACKWAY_META_API_URL …).
    const platforms = createPlatformGateway(
      config.platformUrls,
      createPlatformSender(),
      createAccessTokens({ urls: config.tokenUrls }),
    );
    opened.push(() => platforms.close());
    const app = await buildApp({
      platforms,
      metrics,
      store,
      clock: systemClock,
      config,
      logger,
      rateLimiter,
      commits,
      ...(streamSlots && { streamSlots }),
      ...(options.shared && { metricsText: () => options.shared!.metrics() }),
    });
    opened.push(() => app.close());
    let address: string;
    try {
      address = await app.listen({
        port: config.port,
        host: config.host,
        // Fastify's own line, once per bound address; the banner is the one that says
        // "listening", so the log and the banner do not repeat each other.
        listenTextResolver: (bound) => `trackway serving ${bound} (${config.database.kind})`,
      });
    } catch (error) {
      // The first-run key exists only in this process: if the port is taken, it must not be
      // lost with it.
      if (first) {
        out(options.json ? JSON.stringify(firstRunJson(first)) : firstRunText(first).join('\n'));
      }
      throw listenError(error as NodeJS.ErrnoException, config);
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
        closing ??= closeOpened();
        return closing;
      },
    };
  } catch (error) {
    await closeOpened().catch(() => {});
    throw error;
  }
}
