/**
 * What buildApp is handed and the app type the route files register on. Apart from app.ts so
 * that the route files, which app.ts imports, need not import app.ts back (no import cycle).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { CommitSignal } from '../domain/commits.ts';
import type { Context } from '../domain/context.ts';
import type { Account, KeyScope } from '../domain/model.ts';
import type { Clock } from '../domain/ports/clock.ts';
import type { PlatformGateway } from '../domain/ports/platform-gateway.ts';
import type { RateLimiter } from '../domain/ports/rate-limiter.ts';
import type { Store } from '../domain/ports/store.ts';
import type { StreamSlots } from '../rate-limit/stream-slots.ts';
import type { BatchAdmissionLimits } from './batch-admission.ts';
import type { Metrics } from './metrics.ts';

export interface AppDeps {
  store: Store;
  clock: Clock;
  config: Pick<Config, 'trustProxy' | 'webhookAllowPrivate' | 'webhookAllowHttp'>;
  logger: FastifyBaseLogger;
  /** Counts requests per account and failed authentications per IP; `null` turns limits off. */
  rateLimiter: RateLimiter | null;
  /**
   * The notifier the store was opened with (storage/announce.ts): the metrics count the
   * events it reports, single and batch alike.
   */
  commits?: CommitSignal;
  /** The process's metrics (shared with the delivery worker); a fresh set when left out. */
  metrics?: Metrics;
  /** Set by buildApp: the track path's cached pixel check (`Context.pixelForTracking`). */
  pixelForTracking?: Context['pixelForTracking'];
  /**
   * Where destination test sends go (TRACKWAY_META_API_URL …); the platforms' own URLs when
   * left out.
   */
  platforms?: PlatformGateway;
  /** Between live-tail heartbeats; 15 s when left out (tests shorten it). */
  liveTailHeartbeatMs?: number;
  /** Batch requests in flight and waiting (batch-admission.ts); its defaults when left out. */
  batchAdmission?: Partial<BatchAdmissionLimits>;
  /** Live-tail streams open per account, across instances with Redis; per process otherwise. */
  streamSlots?: StreamSlots;
  /**
   * `/metrics` of one of several processes (TRACKWAY_PROCESSES): all of theirs, aggregated, so
   * a scrape that lands on any of them sees the instance's counters.
   */
  metricsText?: () => Promise<string>;
}

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /v1 route that needs a key. */
    account: Account;
    /** The key the request authenticated with (API routes; `null` on the dashboard's). */
    apiKey: { id: string; scope: KeyScope } | null;
  }
  interface FastifyContextConfig {
    /**
     * Levels of nesting a route's body wraps around what it carries (`{"events": [...]}`: 2),
     * allowed on top of the depth limit so a batched event nests as deep as one sent alone.
     */
    envelopeDepth?: number;
  }
}
