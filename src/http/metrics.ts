/**
 * Prometheus metrics (contract §10), served at GET /metrics without a key: counts and timings
 * only, never an account id, key, URL of a customer's endpoint or any event content. One
 * registry per process (not prom-client's global one) so tests can build many apps.
 *
 * Every labelled series is created at zero when the process starts, so an alert on a rate or
 * on `absent()` sees it before the first increment (a counter that appears only with its first
 * 429 cannot be told apart from a scrape that lost it).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { USER_DATA_FIELDS } from '../domain/events/user-data.ts';
import { MATCH_KEY_FIELDS } from '../domain/forwarding/match-keys.ts';
import { PLATFORMS } from '../domain/forwarding/platforms/registry.ts';
import type { DestinationBacklog } from '../domain/ports/forwarding-store.ts';
import type { OutboxBacklog } from '../domain/ports/webhook-store.ts';

/** The queues whose backlog is measured: webhook deliveries now, forwarding batches later. */
export type OutboxKind = 'webhook' | 'forwarding';

export interface Metrics {
  registry: Registry;
  httpRequests: Histogram<'method' | 'route' | 'status'>;
  eventsTracked: Counter<'result'>;
  /** user_data values left out of accepted events because they could not be used (§19). */
  userDataDropped: Counter<'field'>;
  webhookAttempts: Counter<'outcome'>;
  /** How long one attempt took, from sending to the receiver's answer (or the error). */
  webhookAttemptDuration: Histogram<'outcome'>;
  /** From the commit that wrote a message to its successful delivery, retries included. */
  deliveryLatency: Histogram<'kind'>;
  webhookEndpointsDisabled: Counter<'reason'>;
  rateLimited: Counter<'scope'>;
  /**
   * Browser collection: fields dropped from `/v1/collect` bodies (unknown to this version),
   * and requests from known bots answered 200 and not stored.
   */
  collectDroppedFields: Counter;
  collectBots: Counter;
  /** 1 while Redis fails and rate limits fall back to this instance's memory. */
  rateLimitFallback: Gauge;
  /** Forwarded, failed and skipped (event, destination) outcomes, by platform. */
  forwardOutcomes: Counter<'platform' | 'outcome'>;
  /** One request to a platform, from sending to its answer. */
  forwardRequestDuration: Histogram<'platform'>;
  /** Reads each destination's queue at every scrape (a failed read leaves them out). */
  watchForwarding(read: () => Promise<DestinationBacklog[]>, now: () => Date): void;
  /** Reads `kind`'s backlog from the store at every scrape (a failed read leaves it out). */
  watchBacklog(kind: OutboxKind, read: () => Promise<OutboxBacklog>, now: () => Date): void;
}

interface BacklogFigures {
  pending: number;
  ageSeconds: number;
  lagSeconds: number;
}

const ATTEMPT_OUTCOMES = ['succeeded', 'retry', 'failed'] as const;

export function createMetrics(
  options: { logger?: { warn(details: object, message: string): void } } = {},
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'trackway_' });
  const backlogs = new Map<OutboxKind, { read: () => Promise<OutboxBacklog>; now: () => Date }>();
  /** One read per scrape serves both gauges. */
  let scrape: Promise<Map<OutboxKind, BacklogFigures>> | null = null;
  const readBacklogs = () => {
    scrape ??= (async () => {
      const out = new Map<OutboxKind, BacklogFigures>();
      for (const [kind, source] of backlogs) {
        try {
          const { pending, oldestCreatedAt, nextDueAt } = await source.read();
          const now = source.now().getTime();
          const since = (at: Date | null) =>
            at === null ? 0 : Math.max(0, (now - at.getTime()) / 1000);
          out.set(kind, {
            pending,
            ageSeconds: since(oldestCreatedAt),
            lagSeconds: since(nextDueAt),
          });
        } catch (error) {
          options.logger?.warn({ err: error, kind }, 'outbox backlog unreadable for /metrics');
        }
      }
      return out;
    })().finally(() => {
      scrape = null;
    });
    return scrape;
  };

  const eventsTracked = new Counter({
    name: 'trackway_events_tracked_total',
    help: 'Events committed by POST /v1/track and /v1/track/batch: stored, or deduplicated against an earlier one.',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of ['stored', 'deduplicated']) eventsTracked.inc({ result }, 0);
  const userDataDropped = new Counter({
    name: 'trackway_user_data_dropped_total',
    help: 'user_data values left out of accepted events because they could not be used (a phone not in E.164, a country not alpha-2 …), by field.',
    labelNames: ['field'],
    registers: [registry],
  });
  for (const field of [...USER_DATA_FIELDS, ...MATCH_KEY_FIELDS]) userDataDropped.inc({ field }, 0);
  const webhookAttempts = new Counter({
    name: 'trackway_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (succeeded, retry, failed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const webhookAttemptDuration = new Histogram({
    name: 'trackway_webhook_attempt_duration_seconds',
    help: 'How long a webhook delivery attempt took, from sending to the answer or the error.',
    labelNames: ['outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
    registers: [registry],
  });
  for (const outcome of ATTEMPT_OUTCOMES) {
    webhookAttempts.inc({ outcome }, 0);
    webhookAttemptDuration.zero({ outcome });
  }
  const deliveryLatency = new Histogram({
    name: 'trackway_delivery_latency_seconds',
    help: 'From the commit that wrote a message to its successful delivery, retries included.',
    labelNames: ['kind'],
    // Sub-second on the first attempt; minutes to days when retries were needed.
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300, 1800, 3600, 21600, 86400],
    registers: [registry],
  });
  deliveryLatency.zero({ kind: 'webhook' });
  deliveryLatency.zero({ kind: 'forwarding' });
  const forwardOutcomes = new Counter({
    name: 'trackway_forwarded_events_total',
    help: 'Outcomes of (event, destination) forwarding jobs: forwarded, failed or skipped, by platform.',
    labelNames: ['platform', 'outcome'],
    registers: [registry],
  });
  const forwardRequestDuration = new Histogram({
    name: 'trackway_forward_request_duration_seconds',
    help: 'One request to an ad platform, from sending to its answer (or the error).',
    labelNames: ['platform'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
    registers: [registry],
  });
  for (const platform of PLATFORMS) {
    for (const outcome of ['forwarded', 'failed', 'skipped']) {
      forwardOutcomes.inc({ platform, outcome }, 0);
    }
    forwardRequestDuration.zero({ platform });
  }
  let forwarding: { read: () => Promise<DestinationBacklog[]>; now: () => Date } | null = null;
  let forwardingScrape: Promise<DestinationBacklog[]> | null = null;
  const readForwarding = () => {
    forwardingScrape ??= (async () => {
      try {
        return forwarding ? await forwarding.read() : [];
      } catch (error) {
        options.logger?.warn({ err: error }, 'forwarding backlog unreadable at scrape');
        return [];
      } finally {
        setImmediate(() => {
          forwardingScrape = null;
        });
      }
    })();
    return forwardingScrape;
  };
  new Gauge({
    name: 'trackway_forwarding_queue_depth',
    // Read from the shared store (or one flag): several processes report it once, not summed.
    aggregator: 'max',
    help: 'Forwarding jobs pending, by destination (read from the store at scrape).',
    labelNames: ['destination_id', 'platform'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const b of await readForwarding()) {
        this.set({ destination_id: b.destinationId, platform: b.platform }, b.pending);
      }
    },
  });
  new Gauge({
    name: 'trackway_forwarding_oldest_pending_age_seconds',
    // Read from the shared store (or one flag): several processes report it once, not summed.
    aggregator: 'max',
    help: 'Age of the oldest pending forwarding job, by destination.',
    labelNames: ['destination_id', 'platform'],
    registers: [registry],
    async collect() {
      this.reset();
      const now = forwarding?.now().getTime() ?? Date.now();
      for (const b of await readForwarding()) {
        const age =
          b.oldestCreatedAt === null ? 0 : Math.max(0, (now - b.oldestCreatedAt.getTime()) / 1000);
        this.set({ destination_id: b.destinationId, platform: b.platform }, age);
      }
    },
  });
  const webhookEndpointsDisabled = new Counter({
    name: 'trackway_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints switched off by delivery: answered 410 Gone, or failing for 5 days.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['gone', 'failing']) webhookEndpointsDisabled.inc({ reason }, 0);
  const rateLimited = new Counter({
    name: 'trackway_rate_limited_total',
    help: 'Requests refused with 429: per account, failed authentications per client IP, or browser events per client IP and pixel (collect_ip).',
    labelNames: ['scope'],
    registers: [registry],
  });
  for (const scope of ['account', 'failed_auth', 'collect_ip']) rateLimited.inc({ scope }, 0);
  const collectDroppedFields = new Counter({
    name: 'trackway_collect_dropped_fields_total',
    help: 'Fields dropped from /v1/collect bodies because this version does not know them (old or foreign snippets).',
    registers: [registry],
  });
  const collectBots = new Counter({
    name: 'trackway_collect_bots_total',
    help: '/v1/collect requests from known bots and headless browsers: answered 200, not stored.',
    registers: [registry],
  });
  const rateLimitFallback = new Gauge({
    name: 'trackway_rate_limit_fallback',
    // Read from the shared store (or one flag): several processes report it once, not summed.
    aggregator: 'max',
    help: '1 while Redis fails and rate limits fall back to this instance alone (in memory).',
    registers: [registry],
  });
  rateLimitFallback.set(0);
  new Gauge({
    name: 'trackway_outbox_depth',
    // Read from the shared store (or one flag): several processes report it once, not summed.
    aggregator: 'max',
    help: 'Deliveries pending for enabled endpoints, by queue kind (read from the store at scrape).',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [kind, b] of await readBacklogs()) this.set({ kind }, b.pending);
    },
  });
  new Gauge({
    name: 'trackway_outbox_oldest_pending_age_seconds',
    // Read from the shared store (or one flag): several processes report it once, not summed.
    aggregator: 'max',
    help: 'Age of the oldest message still pending, by queue kind (0 when none is pending).',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [kind, b] of await readBacklogs()) this.set({ kind }, b.ageSeconds);
    },
  });
  new Gauge({
    name: 'trackway_outbox_lag_seconds',
    // Read from the shared store (or one flag): several processes report it once, not summed.
    aggregator: 'max',
    help: 'How long the most overdue pending delivery has been due: the workers falling behind (0 when none is overdue).',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [kind, b] of await readBacklogs()) this.set({ kind }, b.lagSeconds);
    },
  });

  return {
    registry,
    httpRequests: new Histogram({
      name: 'trackway_http_request_duration_seconds',
      help: 'HTTP requests by route template and status, with their duration.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    eventsTracked,
    userDataDropped,
    webhookAttempts,
    webhookAttemptDuration,
    deliveryLatency,
    webhookEndpointsDisabled,
    rateLimited,
    collectDroppedFields,
    collectBots,
    rateLimitFallback,
    forwardOutcomes,
    forwardRequestDuration,
    watchForwarding(read, now) {
      forwarding = { read, now };
    },
    watchBacklog(kind, read, now) {
      backlogs.set(kind, { read, now });
    },
  };
}
