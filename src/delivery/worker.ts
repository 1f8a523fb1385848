/**
 * The delivery worker (svix's model): claim due deliveries under a lease → send → record the
 * attempt → reschedule. Woken at once after a commit that wrote messages (so delivery begins
 * within milliseconds), polling only as a fallback for retries coming due and for messages
 * written by other processes. Any number of workers may run against one store: a claim is
 * exclusive until its lease ends.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AttemptResult, ClaimedDelivery } from '../domain/model.ts';
import type { Clock, Timers } from '../domain/ports/clock.ts';
import type { WebhookStore } from '../domain/ports/webhook-store.ts';
import { decideNext, parseRetryAfter } from '../domain/webhooks/retry-policy.ts';
import { signingSecrets, signPayload, standardWebhookHeaders } from '../domain/webhooks/signing.ts';
import { PER_ENDPOINT_IN_FLIGHT } from './in-flight.ts';
import type { Sender } from './sender.ts';
import { type Look, WorkLoop } from './work-loop.ts';

export interface DeliveryWorkerOptions {
  store: WebhookStore;
  /** Time, and the timers of the worker's polls and waits (a test clock fires them). */
  clock: Clock & Timers;
  sender: Sender;
  logger: Logger;
  /** Seconds between attempts after the first. */
  schedule: number[];
  /** Attempts in flight at once, over all endpoints. */
  concurrency?: number;
  /** Attempts in flight at once for one endpoint, so a slow one cannot starve the rest. */
  perEndpoint?: number;
  /**
   * How long a claim is exclusive: longer than the 15 s an attempt may take, and no longer, so
   * the claims of a worker that died come back soon.
   */
  leaseMs?: number;
  /** Fallback poll interval. */
  pollMs?: number;
  /** The least time between looks a commit's wake-up starts (work-loop.ts `wakeGapMs`). */
  wakeGapMs?: number;
  random?: () => number;
  /** The process's Prometheus metrics of deliveries (http/metrics.ts). */
  metrics?: DeliveryMetrics;
}

/** What the worker records, shaped as prom-client's counters and histograms. */
export interface DeliveryMetrics {
  webhookAttempts: { inc(labels: { outcome: string }): void };
  webhookAttemptDuration: { observe(labels: { outcome: string }, seconds: number): void };
  deliveryLatency: { observe(labels: { kind: string }, seconds: number): void };
  webhookEndpointsDisabled: { inc(labels: { reason: string }): void };
}

export { PER_ENDPOINT_IN_FLIGHT };

/** The error of an attempt whose own details could not be stored. */
const UNRECORDED_ERROR = 'The attempt failed; its details could not be stored';
const IN_FLIGHT = 8 * PER_ENDPOINT_IN_FLIGHT;

export class DeliveryWorker {
  private readonly owner = `worker_${randomUUID()}`;
  private readonly inflight = new Map<string, number>();
  private readonly loop: WorkLoop;
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly leaseMs: number;
  private readonly random: () => number;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.concurrency = options.concurrency ?? IN_FLIGHT;
    this.perEndpoint = options.perEndpoint ?? PER_ENDPOINT_IN_FLIGHT;
    this.leaseMs = options.leaseMs ?? 20_000;
    this.random = options.random ?? Math.random;
    this.loop = new WorkLoop({
      clock: options.clock,
      pollMs: options.pollMs ?? 1_000,
      wakeGapMs: options.wakeGapMs ?? 0,
      look: (now) => this.claim(now),
      failed: (error) => options.logger.error({ err: error }, 'webhook claim failed'),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Look for work now: called after every commit that wrote webhook messages. */
  wake = (): void => this.loop.wake();

  /** Stops claiming, then waits for the attempts in flight to be recorded. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private inflightTotal(): number {
    let total = 0;
    for (const n of this.inflight.values()) total += n;
    return total;
  }

  private async claim(now: Date): Promise<Look> {
    // A cheap read first: most wake-ups (every commit) find nothing due for this worker, and a
    // claim takes the write lock.
    const next = await this.options.store.nextDueAt();
    const capacity = this.concurrency - this.inflightTotal();
    if (capacity <= 0 || next === null || next > now) return { claimed: 0, next };
    const batch = await this.options.store.claimDue({
      now,
      limit: capacity,
      perEndpoint: this.perEndpoint,
      open: Object.fromEntries(this.inflight),
      leaseMs: this.leaseMs,
      owner: this.owner,
    });
    for (const delivery of batch) this.launch(delivery);
    return { claimed: batch.length, next };
  }

  private launch(delivery: ClaimedDelivery): void {
    const id = delivery.endpoint.id;
    this.inflight.set(id, (this.inflight.get(id) ?? 0) + 1);
    // The caps are on HTTP requests to receivers, so a slot is freed as soon as the response
    // is in, while the attempt is still being recorded: the record's commit (a WAL flush on
    // PostgreSQL) must not hold up the next send. The lease keeps the delivery from being
    // claimed again until it is recorded.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.inflight.get(id) ?? 1) - 1;
      if (left <= 0) this.inflight.delete(id);
      else this.inflight.set(id, left);
      this.wake();
    };
    this.loop.track(
      this.deliver(delivery, release)
        .catch((error) =>
          this.options.logger.error(
            { err: error, message_id: delivery.messageId },
            'webhook attempt not recorded',
          ),
        )
        .finally(release),
    );
  }

  private async deliver(delivery: ClaimedDelivery, release: () => void): Promise<void> {
    const { endpoint } = delivery;
    const now = this.options.clock.now();
    const secrets = signingSecrets(endpoint, now);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Trackway-Webhooks/1.0',
      'x-service-signature': signPayload(secrets.serviceSignature, delivery.body),
      ...standardWebhookHeaders(
        secrets.standardWebhooks,
        delivery.messageId,
        Math.floor(now.getTime() / 1000),
        delivery.body,
      ),
    };
    const sent = await this.options.sender.send(endpoint.url, headers, delivery.body);
    release();
    const at = this.options.clock.now();
    const next = decideNext({
      attempt: delivery.attempt,
      statusCode: sent.statusCode,
      retryAfterSeconds: parseRetryAfter(sent.retryAfter, at),
      schedule: this.options.schedule,
      now: at,
      failingSince: endpoint.failingSince,
      random: this.random(),
    });
    const succeeded = next.outcome.kind === 'succeeded';
    const outcome = next.outcome.kind;
    const metrics = this.options.metrics;
    metrics?.webhookAttempts.inc({ outcome });
    metrics?.webhookAttemptDuration.observe({ outcome }, sent.durationMs / 1000);
    const result: AttemptResult = {
      status: succeeded ? 'succeeded' : 'failed',
      responseStatusCode: sent.statusCode,
      durationMs: sent.durationMs,
      error: sent.error,
      responseBody: sent.responseBody,
      ...next,
    };
    // Ids and the status only: never the endpoint's URL, secret or the body (which carries
    // the event's data). The receiver's own error text (a refused connection, a timeout) is ours.
    if (!succeeded) {
      this.options.logger.warn(
        {
          endpoint_id: endpoint.id,
          message_id: delivery.messageId,
          attempt: delivery.attempt,
          status_code: sent.statusCode,
          error: sent.error,
          outcome,
          ...(next.outcome.kind === 'retry' && { next_attempt_at: next.outcome.at.toISOString() }),
        },
        'webhook delivery attempt failed',
      );
    }
    await this.record(delivery, result, at);
    if (succeeded) {
      metrics?.deliveryLatency.observe(
        { kind: 'webhook' },
        Math.max(0, (at.getTime() - delivery.createdAt.getTime()) / 1000),
      );
    }
    if (result.disableEndpoint) {
      const reason = sent.statusCode === 410 ? 'gone' : 'failing';
      metrics?.webhookEndpointsDisabled.inc({ reason });
      this.options.logger.warn(
        {
          endpoint_id: endpoint.id,
          message_id: delivery.messageId,
          reason: result.disableEndpoint,
        },
        'webhook endpoint disabled',
      );
    }
  }

  /** Records the attempt, once more without the receiver's text if the store refuses it. */
  private async record(delivery: ClaimedDelivery, result: AttemptResult, at: Date): Promise<void> {
    try {
      await this.options.store.recordAttempt(delivery, this.owner, result, at);
    } catch (error) {
      // What the receiver sent is the only part of the record it controls. Were the record
      // refused for it, the lease would run out, the message would be sent again and refused
      // again, forever (issue 15: a 200 answered with a NUL byte, redelivered every 20 s). So
      // the outcome is recorded once more without the receiver's text: the schedule moves on.
      // A store that is away refuses this too, and the lease brings the message back later.
      this.options.logger.warn(
        { err: error, message_id: delivery.messageId },
        'webhook attempt record refused; recording it without the response',
      );
      await this.options.store.recordAttempt(
        delivery,
        this.owner,
        { ...result, responseBody: null, error: result.error === null ? null : UNRECORDED_ERROR },
        at,
      );
    }
  }
}
