/**
 * Prometheus metrics (contract §10), served at GET /metrics without a key: counts and timings
 * only, never an account id, key, URL of a customer's endpoint or any event content. One
 * registry per process (not prom-client's global one) so tests can build many apps.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Histogram<'method' | 'route' | 'status'>;
  eventsTracked: Counter<'result'>;
  webhookAttempts: Counter<'outcome'>;
  rateLimited: Counter<'scope'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'trackway_' });
  return {
    registry,
    httpRequests: new Histogram({
      name: 'trackway_http_request_duration_seconds',
      help: 'HTTP requests by route template and status, with their duration.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    eventsTracked: new Counter({
      name: 'trackway_events_tracked_total',
      help: 'Events committed by POST /v1/track and /v1/track/batch: stored, or deduplicated against an earlier one.',
      labelNames: ['result'],
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'trackway_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (succeeded, retry, failed).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'trackway_rate_limited_total',
      help: 'Requests refused with 429: per account, or failed authentications per client IP.',
      labelNames: ['scope'],
      registers: [registry],
    }),
  };
}
