/**
 * Limits that stay per machine when `serve` runs several processes (node:cluster) without Redis:
 * the primary holds the one in-memory rate limiter and stream-slot count, and every HTTP
 * process asks it over the cluster's IPC channel. A count kept in each process would admit
 * N times a plan's limit on N processes; routed through one process it is exact, as the memory
 * limiter is for one process (and as Redis is across machines).
 *
 * The calls a process makes in one turn of its event loop travel as one message and come back
 * as one: under load that is one IPC round trip per loop turn, not per request. The primary
 * counts them in arrival order, each with the time its request gave (windows come from the
 * caller's clock, as with every adapter).
 */
import { TrackwayError } from '../domain/errors.ts';
import type { RateDecision, RateLimiter, RateQuota } from '../domain/ports.ts';
import { MemoryRateLimiter } from '../rate-limit/memory.ts';
import { MemoryStreamSlots, type StreamSlots } from '../rate-limit/stream-slots.ts';

/** One end of the IPC channel: `process` in an HTTP process, a cluster `Worker` in the primary. */
export interface Channel {
  /** `done` hears whether the message left: a closed channel reports there, never throws. */
  send(message: SharedMessage, done: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

type LimitCall = [id: number, key: string, quotas: readonly RateQuota[], nowMs: number];

/** What the two ends say to each other; `tw` keeps them apart from any other IPC message. */
export type SharedMessage =
  | { tw: 'limits'; calls: LimitCall[] }
  | { tw: 'limited'; answers: Array<[id: number, decision: RateDecision]> }
  | { tw: 'slot'; id: number; accountId: string; streamId: string }
  | { tw: 'slotted'; id: number; taken: boolean }
  | { tw: 'unslot'; accountId: string; streamId: string };

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
  readonly #waiting = new Map<
    number,
    { resolve: (answer: RateDecision | boolean) => void; reject: (error: Error) => void }
  >();
  #calls: LimitCall[] = [];
  #nextId = 1;
  #closed = false;

  constructor(channel: Channel) {
    this.#channel = channel;
    channel.on('message', (message) => {
      if (!isShared(message)) return;
      if (message.tw === 'limited') {
        for (const [id, decision] of message.answers) this.#answer(id, decision);
      } else if (message.tw === 'slotted') {
        this.#answer(message.id, message.taken);
      }
    });
  }

  #answer(id: number, answer: RateDecision | boolean): void {
    const waiting = this.#waiting.get(id);
    this.#waiting.delete(id);
    waiting?.resolve(answer);
  }

  #ask<T extends RateDecision | boolean>(register: (id: number) => void): Promise<T> {
    if (this.#closed) return Promise.reject(primaryGone());
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, {
        resolve: resolve as (answer: RateDecision | boolean) => void,
        reject,
      });
      register(id);
    });
  }

  consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision> {
    return this.#ask<RateDecision>((id) => {
      // First call of this loop turn: the batch leaves once the turn's I/O callbacks are done.
      if (this.#calls.length === 0) setImmediate(this.#flush);
      this.#calls.push([id, key, quotas, now.getTime()]);
    });
  }

  readonly #flush = (): void => {
    const calls = this.#calls;
    this.#calls = [];
    this.#send(
      { tw: 'limits', calls },
      calls.map(([id]) => id),
    );
  };

  /** Sends `message`; if it cannot leave, the calls `ids` waited for fail (503, retry). */
  #send(message: SharedMessage, ids: number[] = []): void {
    this.#channel.send(message, (error) => {
      if (error === null) return;
      // The channel is closed: the primary is gone and this process is on its way out.
      this.#closed = true;
      for (const id of ids) {
        this.#waiting.get(id)?.reject(primaryGone());
        this.#waiting.delete(id);
      }
    });
  }

  acquire(accountId: string, streamId: string): Promise<boolean> {
    return this.#ask<boolean>((id) => this.#send({ tw: 'slot', id, accountId, streamId }, [id]));
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
          // Each consume() counts synchronously when called, so arrival order is count order.
          const decisions = message.calls.map(([, key, quotas, nowMs]) =>
            this.#limiter.consume(key, quotas, new Date(nowMs)),
          );
          void Promise.all(decisions).then((answers) =>
            channel.send(
              {
                tw: 'limited',
                answers: answers.map((decision, i) => [message.calls[i]![0], decision]),
              },
              ignoreClosed,
            ),
          );
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
