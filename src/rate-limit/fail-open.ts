/**
 * Redis down must not take the API down (contract §7): while the shared limiter fails, each
 * instance limits on its own in memory. The outage is logged once when it starts and once when
 * Redis answers again; nothing is logged per request.
 */
import type { Logger } from 'pino';
import type { RateDecision, RateLimiter, RateQuota } from '../domain/ports/rate-limiter.ts';

/** The process's `trackway_rate_limit_fallback` gauge: 1 while limiting in memory. */
export interface FallbackGauge {
  set(value: number): void;
}

export class FailOpenRateLimiter implements RateLimiter {
  readonly #shared: RateLimiter;
  readonly #local: RateLimiter;
  readonly #logger: Logger;
  readonly #fallback: FallbackGauge | undefined;
  readonly #target: string;
  #degraded: boolean;

  constructor(
    shared: RateLimiter,
    local: RateLimiter,
    logger: Logger,
    options: {
      /** Redis did not answer at start: limit locally from the first request. */
      degraded?: boolean;
      fallback?: FallbackGauge;
      /** Which Redis, for the warnings: `host:port`, never credentials (redisTarget). */
      target?: string;
    } = {},
  ) {
    this.#shared = shared;
    this.#local = local;
    this.#logger = logger;
    this.#fallback = options.fallback;
    this.#target = options.target === undefined ? 'Redis' : `Redis at ${options.target}`;
    this.#degraded = options.degraded ?? false;
    this.#fallback?.set(this.#degraded ? 1 : 0);
  }

  // Promise callbacks rather than an async function: this runs for every request, and an
  // async wrapper's own promise and resumption cost more than the check itself.
  consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision> {
    return this.#shared.consume(key, quotas, now).then(
      (decision) => {
        if (this.#degraded) {
          this.#degraded = false;
          this.#fallback?.set(0);
          this.#logger.warn(
            `${this.#target} reachable again: rate limits are shared across instances again`,
          );
        }
        return decision;
      },
      (error: unknown) => {
        if (!this.#degraded) {
          this.#degraded = true;
          this.#fallback?.set(1);
          this.#logger.warn(
            { err: error },
            `${this.#target} unreachable: rate limits fall back to this instance alone until it returns`,
          );
        }
        return this.#local.consume(key, quotas, now);
      },
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.#shared.close(), this.#local.close()]);
  }
}
