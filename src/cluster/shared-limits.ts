/**
 * Limits that stay per machine when `serve` runs several processes (node:cluster) without Redis:
 * the primary holds the one in-memory rate limiter and stream-slot count, and every HTTP
 * process asks it over the cluster's IPC channel. A count kept in each process would admit
 * N times a plan's limit on N processes; routed through one process it is exact, as the memory
 * limiter is for one process (and as Redis is across machines).
 *
 * The calls a process makes in one turn of its event loop travel as one message and come back
 * as one, and calls for the same key and windows as one group ("n of these"), as the Redis
 * limiter groups them into one script call: under load that is one IPC round trip per loop
 * turn, not per request (CPU a call over both processes, bench/shared-limits.ts: 41 µs with a
 * message per call, 7.7 with an entry per call, 1.9 grouped). Windows come from the time each
 * request gave, as with every adapter. The same channel carries `/metrics` requests: the
 * primary answers with every process's metrics (prom-client's AggregatorRegistry).
 */
import { TrackwayError } from '../domain/errors.ts';
import type { RateDecision, RateLimiter, RateQuota } from '../domain/ports/rate-limiter.ts';
import { MemoryRateLimiter } from '../rate-limit/memory.ts';
import { MemoryStreamSlots, type StreamSlots } from '../rate-limit/stream-slots.ts';
import { windowIndex, windowResetAt } from '../rate-limit/windows.ts';

/** One end of the IPC channel: `process` in an HTTP process, a cluster `Worker` in the primary. */
export interface Channel {
  /** `done` hears whether the message left: a closed channel reports there, never throws. */
  send(message: SharedMessage, done: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/**
 * The calls of one loop turn for one key, windows and limits: `n` of them, asked as one. The
 * answer says how many of the n were admitted (the first ones, as if they came one after
 * another) and each window's count before them, from which every call's decision follows.
 */
type LimitGroup = [id: number, key: string, quotas: readonly RateQuota[], nowMs: number, n: number];
type LimitAnswer = [id: number, admitted: number, ...countsBefore: number[]];

/** What the two ends say to each other; `tw` keeps them apart from any other IPC message. */
export type SharedMessage =
  | { tw: 'limits'; groups: LimitGroup[] }
  | { tw: 'limited'; answers: LimitAnswer[] }
  | { tw: 'slot'; id: number; accountId: string; streamId: string }
  | { tw: 'slotted'; id: number; taken: boolean }
  | { tw: 'unslot'; accountId: string; streamId: string }
  | { tw: 'metrics'; id: number; text?: string };

/** Calls of this turn waiting for one answer: same key, windows and limits, in arrival order. */
interface PendingGroup {
  key: string;
  quotas: readonly RateQuota[];
  indices: number[];
  nowMs: number;
  waiters: Array<{ resolve(decision: RateDecision): void; reject(error: Error): void }>;
}

function sameGroup(group: PendingGroup, key: string, quotas: readonly RateQuota[], nowMs: number) {
  if (group.key !== key || group.quotas.length !== quotas.length) return false;
  for (let i = 0; i < quotas.length; i++) {
    const mine = quotas[i]!;
    const theirs = group.quotas[i]!;
    if (
      mine.window !== theirs.window ||
      mine.limit !== theirs.limit ||
      windowIndex(mine.window, nowMs) !== group.indices[i]
    ) {
      return false;
    }
  }
  return true;
}

const isShared = (message: unknown): message is SharedMessage =>
  typeof message === 'object' && message !== null && 'tw' in message;

const primaryGone = () =>
  new TrackwayError(
    'service_unavailable',
    'This process is shutting down; retry the request (event ids deduplicate).',
  );

/** The HTTP process's side: a RateLimiter and StreamSlots answered by the primary. */
export class PrimaryLimits implements RateLimiter, StreamSlots {
  readonly #channel: Channel;
  /** Stream-slot requests waiting for their answer. */
  readonly #slotWaiting = new Map<
    number,
    { resolve: (taken: boolean) => void; reject: (error: Error) => void }
  >();
  /** `/metrics` requests waiting for the primary's aggregate. */
  readonly #metricsWaiting = new Map<
    number,
    { resolve: (text: string) => void; reject: (error: Error) => void }
  >();
  /** Limit groups sent and not yet answered. */
  readonly #groupsWaiting = new Map<number, PendingGroup>();
  /** This turn's limit groups, not yet sent. */
  #turn: PendingGroup[] = [];
  #nextId = 1;
  #closed = false;

  constructor(channel: Channel) {
    this.#channel = channel;
    channel.on('message', (message) => {
      if (!isShared(message)) return;
      if (message.tw === 'limited') {
        for (const answer of message.answers) this.#decide(answer);
      } else if (message.tw === 'slotted') {
        this.#slotWaiting.get(message.id)?.resolve(message.taken);
        this.#slotWaiting.delete(message.id);
      } else if (message.tw === 'metrics') {
        this.#metricsWaiting.get(message.id)?.resolve(message.text ?? '');
        this.#metricsWaiting.delete(message.id);
      }
    });
  }

  /** Each call of a group, in its place in the queue (as RedisRateLimiter decides them). */
  #decide([id, admitted, ...before]: LimitAnswer): void {
    const group = this.#groupsWaiting.get(id);
    if (!group) return;
    this.#groupsWaiting.delete(id);
    group.waiters.forEach(({ resolve }, position) => {
      const allowed = position < admitted;
      const taken = allowed ? position + 1 : admitted;
      resolve({
        allowed,
        windows: group.quotas.map((quota, i) => ({
          window: quota.window,
          limit: quota.limit,
          remaining: Math.max(0, quota.limit - before[i]! - taken),
          resetAt: windowResetAt(quota.window, group.indices[i]!),
        })),
      });
    });
  }

  consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision> {
    if (this.#closed) return Promise.reject(primaryGone());
    const nowMs = now.getTime();
    return new Promise<RateDecision>((resolve, reject) => {
      const waiter = { resolve, reject };
      for (const group of this.#turn) {
        if (sameGroup(group, key, quotas, nowMs)) {
          group.waiters.push(waiter);
          return;
        }
      }
      // First call of this loop turn: the turn's calls leave once its I/O callbacks are done.
      if (this.#turn.length === 0) setImmediate(this.#flush);
      this.#turn.push({
        key,
        quotas,
        indices: quotas.map((quota) => windowIndex(quota.window, nowMs)),
        nowMs,
        waiters: [waiter],
      });
    });
  }

  readonly #flush = (): void => {
    const groups = this.#turn;
    this.#turn = [];
    const sent: LimitGroup[] = [];
    const ids: number[] = [];
    for (const group of groups) {
      const id = this.#nextId++;
      this.#groupsWaiting.set(id, group);
      ids.push(id);
      sent.push([id, group.key, group.quotas, group.nowMs, group.waiters.length]);
    }
    this.#send({ tw: 'limits', groups: sent }, () => {
      for (const id of ids) {
        const group = this.#groupsWaiting.get(id);
        this.#groupsWaiting.delete(id);
        // The primary is gone: the HTTP layer answers these requests 503.
        for (const waiter of group?.waiters ?? []) waiter.reject(primaryGone());
      }
    });
  };

  /** Sends `message`; if it cannot leave, `failed` runs (the calls it carried fail with 503). */
  #send(message: SharedMessage, failed: () => void = () => {}): void {
    this.#channel.send(message, (error) => {
      if (error === null) return;
      // The channel is closed: the primary is gone and this process is on its way out.
      this.#closed = true;
      failed();
    });
  }

  acquire(accountId: string, streamId: string): Promise<boolean> {
    if (this.#closed) return Promise.reject(primaryGone());
    const id = this.#nextId++;
    return new Promise<boolean>((resolve, reject) => {
      this.#slotWaiting.set(id, { resolve, reject });
      this.#send({ tw: 'slot', id, accountId, streamId }, () => {
        this.#slotWaiting.delete(id);
        reject(primaryGone());
      });
    });
  }

  /** Every process's metrics, aggregated by the primary (prom-client's AggregatorRegistry). */
  metrics(): Promise<string> {
    if (this.#closed) return Promise.reject(primaryGone());
    const id = this.#nextId++;
    return new Promise<string>((resolve, reject) => {
      this.#metricsWaiting.set(id, { resolve, reject });
      this.#send({ tw: 'metrics', id }, () => {
        this.#metricsWaiting.delete(id);
        reject(primaryGone());
      });
    });
  }

  release(accountId: string, streamId: string): void {
    this.#send({ tw: 'unslot', accountId, streamId });
  }

  /** The primary frees a process's slots when it exits: nothing expires, so nothing to renew. */
  renew(): void {}

  async close(): Promise<void> {
    this.#closed = true;
  }
}

/**
 * The primary's side: one memory limiter and one slot count for every HTTP process attached.
 * A process that exits (killed or not) gives its stream slots back.
 */
export class SharedLimitsHost {
  readonly #limiter = new MemoryRateLimiter();
  readonly #slots = new MemoryStreamSlots();

  /** Answers `channel`'s requests; call `detached` once its process has exited. */
  attach(channel: Channel): { detached(): void } {
    // A process that died with answers on their way has nobody left to answer.
    const ignoreClosed = () => {};
    const held = new Set<string>();
    const key = (accountId: string, streamId: string) => `${accountId}\u0000${streamId}`;
    channel.on('message', (message) => {
      if (!isShared(message)) return;
      switch (message.tw) {
        case 'limits': {
          // A group's n calls counted at once, as n requests one after another would be.
          const answers = message.groups.map(([id, key, quotas, nowMs, n]): LimitAnswer => {
            const { admitted, countsBefore } = this.#limiter.consumeMany(
              key,
              quotas,
              new Date(nowMs),
              n,
            );
            return [id, admitted, ...countsBefore];
          });
          channel.send({ tw: 'limited', answers }, ignoreClosed);
          return;
        }
        case 'slot': {
          const { id, accountId, streamId } = message;
          void this.#slots.acquire(accountId, streamId).then((taken) => {
            if (taken) held.add(key(accountId, streamId));
            channel.send({ tw: 'slotted', id, taken }, ignoreClosed);
          });
          return;
        }
        case 'unslot':
          held.delete(key(message.accountId, message.streamId));
          this.#slots.release(message.accountId, message.streamId);
          return;
        default:
          return;
      }
    });
    return {
      detached: () => {
        for (const entry of held) {
          const [accountId, streamId] = entry.split('\u0000') as [string, string];
          this.#slots.release(accountId, streamId);
        }
        held.clear();
      },
    };
  }
}
