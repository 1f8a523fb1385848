/**
 * The loop both delivery workers run (worker.ts for webhooks, forwarding-worker.ts for ad
 * platforms): look for work at once when woken (after a commit that may have queued some,
 * CommitSignal), again at once while a look finds work or was woken during it, otherwise when
 * the next item comes due or after `pollMs` at the latest (retries coming due, work written by
 * other processes). Timers run on the injected clock, so a test clock drives the loop without
 * sleeping. What a look launches is tracked, so stopping waits for it.
 */
import type { Clock, Timers } from '../domain/ports/clock.ts';

/** What one look found. */
export interface Look {
  /** Items claimed and launched: more may be waiting, so the loop looks again at once. */
  claimed: number;
  /** When the earliest item is due (null: none); a due one is leased or over a cap. */
  next: Date | null;
}

export interface WorkLoopOptions {
  clock: Clock & Timers;
  /** The longest the loop sleeps between looks. */
  pollMs: number;
  /** Claims what is due at `now` and launches it (through `track`). */
  look(now: Date): Promise<Look>;
  /** A look that threw: reported, and the loop looks again after `pollMs`. */
  failed(error: unknown): void;
  /**
   * The least time from one look's start to the next that a wake-up starts (0: at once). On a
   * sharded database (Citus) a look reads every shard, and every commit that queued work wakes
   * the loop: without a gap, a busy ingest path would read every shard after every commit. A
   * look that claimed work still looks again at once.
   */
  wakeGapMs?: number;
}

const ignore = () => {};

export class WorkLoop {
  private readonly running = new Set<Promise<void>>();
  private cancelTimer: (() => void) | undefined;
  private looking = false;
  /** Woken during a look: look again as soon as it ends. */
  private again = false;
  /** A look is already due at once: further wake-ups before it runs add nothing. */
  private wakeQueued = false;
  private stopped = true;
  /** When the last look began (clock ms), for `wakeGapMs`. */
  private lastLookAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: WorkLoopOptions) {}

  /** Stopping or stopped: work in flight should not start more (a worker's next batch). */
  get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Look for work now: called after every commit that may have queued some. */
  wake = (): void => {
    if (this.stopped) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    // Every tracked event wakes the loop; a burst of them needs one timer, not one each.
    if (this.wakeQueued) return;
    this.schedule(this.untilWakeAllowed(), true);
  };

  /** How long a wake-up waits for `wakeGapMs` to pass since the last look began. */
  private untilWakeAllowed(): number {
    const gap = this.options.wakeGapMs ?? 0;
    if (gap <= 0) return 0;
    return Math.max(0, this.lastLookAt + gap - this.options.clock.now().getTime());
  }

  /**
   * Keeps `task` (work a look launched) until it settles, so `stop` waits for it. The task
   * reports its own failures; a rejection here is only ignored, never left unhandled.
   */
  track(task: Promise<unknown>): void {
    const tracked: Promise<void> = task.then(ignore, ignore).finally(() => {
      this.running.delete(tracked);
    });
    this.running.add(tracked);
  }

  /** Stops looking, then waits for the work in flight (and any it launches) to settle. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.wakeQueued = false;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** `woken`: a wake-up's look, which later wake-ups join rather than move. */
  private schedule(delayMs: number, woken = delayMs === 0): void {
    this.cancelTimer?.();
    this.wakeQueued = woken;
    this.cancelTimer = this.options.clock.setTimer(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.looking) return;
    this.looking = true;
    this.wakeQueued = false;
    this.again = false;
    let found: Look = { claimed: 0, next: null };
    const now = this.options.clock.now();
    this.lastLookAt = now.getTime();
    try {
      found = await this.options.look(now);
    } catch (error) {
      this.options.failed(error);
    } finally {
      this.looking = false;
    }
    if (this.stopped) return;
    if (found.claimed > 0) return this.schedule(0);
    if (this.again) return this.schedule(this.untilWakeAllowed(), true);
    // Nothing claimable now. Sleep until the next item comes due; if one is due already it is
    // leased or over a cap, and the work ending will wake the loop.
    const { pollMs } = this.options;
    const untilDue = found.next === null ? pollMs : found.next.getTime() - now.getTime();
    this.schedule(untilDue > 0 ? Math.min(untilDue, pollMs) : pollMs);
  }
}
