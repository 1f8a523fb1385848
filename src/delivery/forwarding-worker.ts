/**
 * The forwarding worker: the webhook delivery worker's model (worker.ts) applied to ad
 * platforms. Claim due jobs under a lease → send → record every attempt → reschedule, woken
 * at once after a commit that may have queued jobs, polling only as a fallback.
 *
 * Claims are per destination: each destination's due jobs are taken as one batch of up to its
 * platform's maximum (Meta 1,000), and a destination has at most one batch in flight in this
 * worker, so a slow or hanging platform holds only its own batch; every other destination
 * keeps being claimed and sent meanwhile (isolation, contract §12).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isolateRefusal } from '../domain/forwarding/batch-isolation.ts';
import { buildForDestination } from '../domain/forwarding/consent-gate.ts';
import type {
  BuiltBatch,
  Destination,
  ForwardableEvent,
  PlatformRequest,
} from '../domain/forwarding/model.ts';
import { requestUrl } from '../domain/forwarding/model.ts';
import { excerpt, type Verdict } from '../domain/forwarding/platform-response.ts';
import type { PlatformModule } from '../domain/forwarding/platforms/platform.ts';
import { type Platform, platformModule } from '../domain/forwarding/platforms/registry.ts';
import type { WebhookEvent } from '../domain/model.ts';
import type { Clock, Timers } from '../domain/ports/clock.ts';
import type {
  ClaimedBatch,
  ClaimedJob,
  ClaimedReplay,
  ForwardAttempt,
  ForwardingStore,
  JobOutcome,
} from '../domain/ports/forwarding-store.ts';
import type { ForwardingSource } from '../domain/ports/match-key-store.ts';
import { decideNext } from '../domain/webhooks/retry-policy.ts';
import { type AccessTokens, createAccessTokens } from './access-tokens.ts';
import { type PlatformSender, sendAuthorized } from './platform-sender.ts';
import { type Look, WorkLoop } from './work-loop.ts';

/** What the worker records, shaped as prom-client's counters and histograms. */
export interface ForwardingMetrics {
  forwardOutcomes: { inc(labels: { platform: string; outcome: string }, value?: number): void };
  forwardRequestDuration: { observe(labels: { platform: string }, seconds: number): void };
  deliveryLatency: { observe(labels: { kind: string }, seconds: number): void };
}

export interface ForwardingWorkerOptions {
  store: ForwardingStore;
  source: ForwardingSource;
  clock: Clock & Timers;
  sender: PlatformSender;
  logger: Logger;
  /** Seconds between attempts after the first (TRACKWAY_FORWARD_RETRY_SCHEDULE). */
  schedule: number[];
  /** Base URLs by platform (TRACKWAY_META_API_URL …). */
  baseUrls: Record<Platform, string>;
  /**
   * The OAuth access tokens of the platforms whose module declares `auth`; one of its own,
   * at the modules' default token URLs, if not given.
   */
  tokens?: AccessTokens;
  /** Events per request, at most the platform's maximum (benchmarks and tests lower it). */
  batchSize?: Partial<Record<Platform, number>>;
  /** Destinations with a batch in flight at once. */
  concurrency?: number;
  /** How long a claim is exclusive: longer than a batch with its bisection may take. */
  leaseMs?: number;
  pollMs?: number;
  /** The least time between looks a commit's wake-up starts (work-loop.ts `wakeGapMs`). */
  wakeGapMs?: number;
  /** The longest a worker waits before looking for replays it was not told of. */
  replayPollMs?: number;
  random?: () => number;
  metrics?: ForwardingMetrics;
}

/** Requests of one batch sent at once (they go to one platform origin: its pool has 16). */
const REQUESTS_AT_ONCE = 4;

/** A claimed batch with its events loaded and its requests built. */
interface Prepared {
  batch: ClaimedBatch;
  byId: Map<string, ForwardableEvent>;
  built: BuiltBatch;
}

/** What happened to one event of the batch: its ledger rows and the final verdict. */
interface EventResult {
  attempts: ForwardAttempt[];
  verdict: Verdict;
}

export class ForwardingWorker {
  private readonly owner = `forwarder_${randomUUID()}`;
  /** Destinations with a batch in flight in this worker. */
  private readonly busy = new Set<string>();
  private readonly loop: WorkLoop;
  /** Advances recorded replays (contract §21), one at a time, beside the sends. */
  private readonly replays: WorkLoop;
  private replaying = false;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private readonly tokens: AccessTokens;
  private readonly ownTokens: boolean;

  constructor(private readonly options: ForwardingWorkerOptions) {
    this.ownTokens = options.tokens === undefined;
    this.tokens = options.tokens ?? createAccessTokens();
    this.concurrency = options.concurrency ?? 32;
    // Twice the 15 s a request may take: a batch cut short by a crash comes back within 30 s.
    // A bisection outliving it may be resent by another worker (at least once; Meta
    // deduplicates by event_id).
    this.leaseMs = options.leaseMs ?? 30_000;
    this.random = options.random ?? Math.random;
    this.loop = new WorkLoop({
      clock: options.clock,
      pollMs: options.pollMs ?? 1_000,
      wakeGapMs: options.wakeGapMs ?? 0,
      look: (now) => this.claim(now),
      failed: (error) => options.logger.error({ err: error }, 'forwarding claim failed'),
    });
    this.replays = new WorkLoop({
      clock: options.clock,
      // Replays recorded by another process, or left by a dead one (its lease runs out).
      pollMs: options.replayPollMs ?? 1_000,
      look: (now) => this.claimReplay(now),
      failed: (error) => options.logger.error({ err: error }, 'replay claim failed'),
    });
  }

  start(): void {
    this.loop.start();
    this.replays.start();
  }

  /** Look for work now: called after every commit that may have queued jobs. */
  wake = (): void => this.loop.wake();

  /** Look for replays to queue now: called when one was recorded. */
  wakeReplays = (): void => this.replays.wake();

  /** Stops claiming, then waits for the batches in flight to be settled. */
  async stop(): Promise<void> {
    await Promise.all([this.loop.stop(), this.replays.stop()]);
    if (this.ownTokens) await this.tokens.close();
  }

  private async claimReplay(now: Date): Promise<Look> {
    if (this.replaying) return { claimed: 0, next: null };
    const replay = await this.options.store.claimReplay({
      owner: this.owner,
      now,
      leaseMs: this.leaseMs,
    });
    if (replay === null) return { claimed: 0, next: null };
    this.replaying = true;
    this.replays.track(
      this.runReplay(replay)
        .catch((error) =>
          this.options.logger.error(
            { err: error, replay_id: replay.id },
            'replay interrupted; it resumes from its last chunk when its lease ends',
          ),
        )
        .finally(() => {
          this.replaying = false;
          this.wakeReplays();
        }),
    );
    return { claimed: 1, next: null };
  }

  /**
   * Queues a replay's events chunk by chunk, each chunk one short transaction, pausing after
   * each as long as it took: the replay has at most half of the process (and of SQLite's one
   * writer) while requests have the rest, like the retention purge (domain/lifecycle).
   */
  private async runReplay(replay: ClaimedReplay): Promise<void> {
    while (!this.replays.stopping) {
      const started = performance.now();
      const step = await this.options.store.advanceReplay({
        replay,
        owner: this.owner,
        now: this.options.clock.now(),
        leaseMs: this.leaseMs,
      });
      if (step === null || step.done) return;
      const took = performance.now() - started;
      await new Promise<void>((resolve) => setTimeout(resolve, Math.min(took, 1_000)));
    }
  }

  private batchSize(platform: Platform): number {
    const max = platformModule(platform).limits.eventsPerRequest;
    return Math.max(1, Math.min(max, this.options.batchSize?.[platform] ?? max));
  }

  private async claim(now: Date): Promise<Look> {
    // A cheap read first: most wake-ups (every stored event) find nothing due.
    const next = await this.options.store.nextDueAt();
    if (this.busy.size >= this.concurrency || next === null || next > now) {
      return { claimed: 0, next };
    }
    const batches = await this.options.store.claim({
      now,
      take: (d) => this.batchSize(d.type),
      busy: [...this.busy],
      leaseMs: this.leaseMs,
      owner: this.owner,
    });
    for (const batch of batches) this.launch(batch);
    return { claimed: batches.length, next };
  }

  private launch(batch: ClaimedBatch): void {
    const id = batch.destination.id;
    this.busy.add(id);
    this.loop.track(
      this.forward(batch)
        .catch((error) =>
          this.options.logger.error(
            { err: error, destination_id: id },
            'forwarding batch not settled; its jobs come back when the lease ends',
          ),
        )
        .finally(() => {
          this.busy.delete(id);
          this.wake();
        }),
    );
  }

  /**
   * Forwards the batch, then this destination's next ones while it has due jobs: each next
   * batch is claimed, loaded and built while the one before is at the platform, so the
   * worker's own work overlaps the platform's (and, on PostgreSQL, the database's). Still one
   * batch in flight per destination: the next is sent only once the one before is settled.
   */
  private async forward(first: ClaimedBatch): Promise<void> {
    let current: Prepared | null = await this.prepare(first);
    // The credentials refusal of the batch before, with the destination's version it refused.
    let refused: { message: string; version: number } | null = null;
    while (current !== null) {
      // Only behind a full batch (a backlog): a batch claimed early while events trickle in
      // would be small and hold the next arrivals back for one more round trip; those are
      // left to the wake-up after the batch (measured on PostgreSQL at 200 events/s: p50
      // 37 ms without, 71 ms with). After a refusal nothing more is claimed: the destination
      // is suspended now.
      const { destination, jobs } = current.batch;
      const upcoming: Promise<Prepared | null> =
        this.loop.stopping || refused !== null || jobs.length < this.batchSize(destination.type)
          ? Promise.resolve(null)
          : this.prepareNext(destination.id);
      const d: Destination = current.batch.destination;
      try {
        // The batch claimed before the refusal was recorded is held back unsent, unless the
        // destination was changed (new credentials) before it was claimed.
        const before = refused?.version === d.updatedAt.getTime() ? refused.message : null;
        const message = await this.deliver(current, before);
        refused = message === null ? null : { message, version: d.updatedAt.getTime() };
      } catch (error) {
        // Its jobs come back when their lease ends; so do the next batch's (claimed already).
        await upcoming;
        throw error;
      }
      current = await upcoming;
    }
  }

  /** Claims, loads and builds the destination's next batch, or null when it has none due. */
  private async prepareNext(destinationId: string): Promise<Prepared | null> {
    // Let the request just handed to undici reach its socket before this synchronous work
    // (SQLite's queries run on this thread).
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      const [batch] = await this.options.store.claim({
        now: this.options.clock.now(),
        take: (d) => this.batchSize(d.type),
        busy: [],
        leaseMs: this.leaseMs,
        owner: this.owner,
        only: destinationId,
      });
      return batch ? await this.prepare(batch) : null;
    } catch (error) {
      this.options.logger.error(
        { err: error, destination_id: destinationId },
        'forwarding claim failed',
      );
      return null;
    }
  }

  /** The batch's events, loaded, and the platform's requests built from them. */
  private async prepare(batch: ClaimedBatch): Promise<Prepared> {
    const { destination: d, jobs } = batch;
    const loaded = await this.options.source.forwardable(
      d.accountId,
      d.pixelId,
      jobs.map((j) => j.eventId),
      d.type,
    );
    const byId = new Map(loaded.map((f) => [f.event.eventId, f]));
    const built = buildForDestination(
      platformModule(d.type),
      d.config,
      jobs.flatMap((j) => byId.get(j.eventId) ?? []),
      { now: this.options.clock.now() },
    );
    return { batch, byId, built };
  }

  /**
   * Sends the batch's requests (none if the destination's credentials were refused by the
   * batch before: `suspendedBefore`) and settles it; the credentials refusal, if any.
   */
  private async deliver(
    prepared: Prepared,
    suspendedBefore: string | null,
  ): Promise<string | null> {
    const { batch, byId, built } = prepared;
    const { destination: d, jobs } = batch;
    const results = new Map<string, EventResult>();
    let suspended: string | null = suspendedBefore;
    // A batch of several requests (GA4: one per visitor, ≤ 25 events each) is sent a few
    // requests at a time rather than one after the other; a credentials refusal stops what
    // has not been sent yet.
    const waiting = [...built.requests];
    const lane = async () => {
      for (let request = waiting.shift(); request; request = waiting.shift()) {
        if (suspended !== null) return;
        await this.sendIsolated(d, request, results);
        for (const id of request.eventIds) {
          const verdict = results.get(id)?.verdict;
          if (verdict?.kind === 'auth') suspended = verdict.message;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(REQUESTS_AT_ONCE, waiting.length) }, lane));
    const skipped = new Map(built.skipped.map((s) => [s.eventId, s.reason]));
    // What the builder changed to fit the platform (GA4's dropped or truncated params): kept
    // on the event's rows of the attempt ledger, so its record says what the platform did not
    // receive (contract §12 keeps `reason` for skipped events).
    const notes = new Map(built.notes.map((n) => [n.eventId, n.note]));
    const at = this.options.clock.now();
    const outcomes: JobOutcome[] = [];
    const emit: WebhookEvent[] = [];
    let transient: string | null = null;
    let failedBatch: string | null = null;
    let forwarded = 0;
    let failed = 0;
    for (const job of jobs) {
      const f = byId.get(job.eventId);
      const outcome = this.outcomeOf(
        d,
        job,
        f,
        skipped.get(job.eventId),
        results.get(job.eventId),
        at,
        suspended,
        notes.get(job.eventId),
      );
      outcomes.push(outcome);
      if (outcome.status === 'forwarded' && f) {
        forwarded += 1;
        const result = results.get(job.eventId);
        emit.push({
          accountId: d.accountId,
          type: 'event.forwarded',
          occurredAt: at,
          data: {
            pixel_id: d.pixelId,
            event_id: job.eventId,
            event_name: f.event.eventName,
            destination_id: d.id,
            platform: d.type,
            forwarded_at: at.toISOString(),
            platform_response:
              result?.verdict.kind === 'success'
                ? receiptOf(platformModule(d.type), result.verdict.receipt)
                : {},
          },
        });
        this.options.metrics?.deliveryLatency.observe(
          { kind: 'forwarding' },
          Math.max(0, (at.getTime() - job.createdAt.getTime()) / 1000),
        );
      }
      if (outcome.status === 'failed') {
        failed += 1;
        failedBatch ??= outcome.lastError;
      }
      const verdict = results.get(job.eventId)?.verdict;
      if (verdict?.kind === 'transient') transient = verdict.message;
    }
    const state = this.nextState(d, suspended, transient);
    await this.options.store.settle({ destination: d, owner: this.owner, outcomes, state, emit });
    const metrics = this.options.metrics;
    if (metrics) {
      const count = (status: string) => outcomes.filter((o) => o.status === status).length;
      if (forwarded > 0)
        metrics.forwardOutcomes.inc({ platform: d.type, outcome: 'forwarded' }, forwarded);
      if (failed > 0) metrics.forwardOutcomes.inc({ platform: d.type, outcome: 'failed' }, failed);
      const skippedCount = count('skipped');
      if (skippedCount > 0)
        metrics.forwardOutcomes.inc({ platform: d.type, outcome: 'skipped' }, skippedCount);
    }
    // Ids, counts and the platform's own message only: never the request's URL (Meta's holds
    // the access token) nor the events' data.
    if (failedBatch !== null || transient !== null) {
      this.options.logger.warn(
        {
          destination_id: d.id,
          pixel_id: d.pixelId,
          platform: d.type,
          events: jobs.length,
          failed,
          retrying: outcomes.filter((o) => o.status === 'pending').length,
          error: failedBatch ?? transient,
        },
        'forwarding batch failed',
      );
    }
    if (suspended !== null && suspendedBefore === null && d.state !== 'suspended') {
      this.options.logger.warn(
        { destination_id: d.id, pixel_id: d.pixelId, platform: d.type, error: suspended },
        'forwarding destination suspended: the platform refused its credentials',
      );
    }
    return suspended;
  }

  /**
   * Sends one request; a refusal of a request carrying several events is bisected
   * (batch-isolation.ts) until the invalid event is alone, so the others are forwarded.
   */
  private async sendIsolated(
    d: Destination,
    request: PlatformRequest,
    results: Map<string, EventResult>,
  ): Promise<void> {
    const adapter = platformModule(d.type);
    const attemptedAt = this.options.clock.now();
    const sent = await sendAuthorized(
      this.options.sender,
      this.tokens,
      d.type,
      d.config,
      requestUrl(this.options.baseUrls[d.type], request),
      request,
    );
    const { answer, durationMs } = sent;
    this.options.metrics?.forwardRequestDuration.observe({ platform: d.type }, durationMs / 1000);
    // A token refused or unavailable is decided before the platform answers.
    const verdict = sent.verdict ?? adapter.classify(answer, this.options.clock.now());
    const attempt: ForwardAttempt = {
      attemptedAt,
      statusCode: answer.kind === 'response' ? answer.status : null,
      durationMs,
      platformResponse: answer.kind === 'response' ? excerpt(answer.body) : answer.message,
      note: null,
    };
    // A platform that took part of the request names the events it refused by their index.
    const refused = new Map(
      verdict.kind === 'success' ? (verdict.refused ?? []).map((r) => [r.index, r.message]) : [],
    );
    request.eventIds.forEach((id, index) => {
      const result = results.get(id) ?? { attempts: [], verdict };
      result.attempts.push(attempt);
      const refusal = refused.get(index);
      result.verdict = refusal === undefined ? verdict : { kind: 'permanent', message: refusal };
      results.set(id, result);
    });
    const isolation = isolateRefusal(adapter, verdict, request.eventIds.length);
    if (isolation.kind !== 'split' || !adapter.subRequest) return;
    for (const [start, end] of isolation.parts) {
      await this.sendIsolated(d, adapter.subRequest(request, start, end), results);
    }
  }

  private outcomeOf(
    d: Destination,
    job: ClaimedJob,
    forwardable: ForwardableEvent | undefined,
    skipReason: string | undefined,
    result: EventResult | undefined,
    at: Date,
    suspended: string | null,
    note?: string,
  ): JobOutcome {
    const base = {
      pixelId: job.pixelId,
      eventId: job.eventId,
      ...(job.ref !== undefined && { ref: job.ref }),
      reason: null,
      lastError: null,
      forwardedAt: null,
      nextAttemptAt: null,
      attempts:
        note === undefined
          ? (result?.attempts ?? [])
          : (result?.attempts ?? []).map((a) => ({ ...a, note })),
    };
    if (!forwardable) {
      // Erased or purged since the job was written: there is nothing left to send.
      return { ...base, status: 'skipped', reason: 'the event is no longer stored' };
    }
    if (skipReason !== undefined) return { ...base, status: 'skipped', reason: skipReason };
    if (!result) {
      // Not sent: a credentials refusal stopped the batch before its request. It waits.
      return { ...base, status: 'pending', lastError: suspended, nextAttemptAt: at };
    }
    const { verdict } = result;
    switch (verdict.kind) {
      case 'success':
        return { ...base, status: 'forwarded', forwardedAt: at };
      case 'permanent':
        return { ...base, status: 'failed', lastError: verdict.message };
      case 'auth':
        // The destination is suspended: the event waits for new credentials.
        return { ...base, status: 'pending', lastError: verdict.message, nextAttemptAt: at };
      case 'transient': {
        const attempt = job.attempts + result.attempts.length;
        const next = decideNext({
          attempt,
          statusCode: null,
          retryAfterSeconds: null,
          schedule: this.options.schedule,
          now: at,
          failingSince: null,
          random: this.random(),
        }).outcome;
        let retryAt = next.kind === 'retry' ? next.at : null;
        if (retryAt !== null && verdict.retryAfterMs !== undefined) {
          retryAt = new Date(at.getTime() + Math.min(verdict.retryAfterMs, 3_600_000));
        }
        if (retryAt === null) {
          return { ...base, status: 'failed', lastError: `retries exhausted: ${verdict.message}` };
        }
        const window = platformModule(d.type).windowMs(forwardable.actionSource);
        if (window !== null && retryAt.getTime() > forwardable.event.timestamp.getTime() + window) {
          return {
            ...base,
            status: 'failed',
            lastError: `retries stopped at the platform's window: ${verdict.message}`,
          };
        }
        return { ...base, status: 'pending', lastError: verdict.message, nextAttemptAt: retryAt };
      }
    }
  }

  private nextState(
    d: Destination,
    suspended: string | null,
    transient: string | null,
  ): { state: Destination['state']; lastError: string | null } | null {
    if (suspended !== null) return { state: 'suspended', lastError: suspended };
    if (transient !== null) return { state: 'failing', lastError: transient };
    if (d.state === 'failing') return { state: 'active', lastError: null };
    return null;
  }
}

/** What `event.forwarded` carries of a receipt (Meta's `fbtrace_id` and `events_received` …). */
function receiptOf(
  platform: PlatformModule,
  receipt: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of platform.receiptKeys) {
    if (receipt[key] !== undefined) out[key] = receipt[key];
  }
  return out;
}
