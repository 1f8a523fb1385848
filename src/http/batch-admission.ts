/**
 * How many `POST /v1/track/batch` requests this process reads, decodes and stores at once
 * (issue 35). A 1,000-event batch holds ≈ 8 MB while it is handled and waits decoded for its
 * commit, so with every client's batch admitted, peak RSS grew with the number of clients
 * (469 MB at 30 connections on PostgreSQL). Bounding the batches in flight bounds that memory.
 *
 * The bound is per account first, so it stays fair (contract §21): one account's flood waits in
 * its own queue and never makes another account's batch wait or fail. At most `perAccount` of
 * one account's batches are in flight; the rest of that account wait FIFO. A process-wide
 * `total` bounds memory against many busy accounts at once; when it is what binds, the freed
 * slots go round-robin over the accounts that wait, so each waits at most for its turn.
 *
 * Waiting happens before the body is read (the route's onRequest hook, after authentication
 * and rate limits): the waiting bytes stay in the socket, not the heap. Past the queue bounds or
 * the longest wait, the request is answered 503 with `Retry-After: 1`, nothing stored. A slot is
 * freed when the response closes, whether it was sent, failed, or the client left.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { TrackwayError } from '../domain/errors.ts';
import { errorBody } from './errors.ts';

export interface BatchAdmissionLimits {
  /** One account's batches in flight at once: one commits while the next is prepared. */
  perAccount: number;
  /** All accounts' batches in flight at once; ≥ perAccount, so it never binds one account. */
  total: number;
  /** One account's batches waiting; past it that account's next batch gets a 503. */
  waitingPerAccount: number;
  /** All accounts' batches waiting (each holds a socket and its unread bytes). */
  waitingTotal: number;
  /** Longest wait, well inside Node's 30-s request timeout so the body still has time. */
  maxWaitMs: number;
}

export const BATCH_ADMISSION_LIMITS: BatchAdmissionLimits = {
  perAccount: 2,
  total: 8,
  waitingPerAccount: 64,
  waitingTotal: 512,
  maxWaitMs: 20_000,
};

export const BATCHES_BUSY = 'Too many batches in progress; nothing was stored';

interface Line {
  account: string;
  active: number;
  waiting: Waiter[];
}

interface Waiter {
  line: Line;
  state: 'waiting' | 'admitted' | 'done';
  admit: () => void;
  refuse: () => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class BatchAdmission {
  readonly #limits: BatchAdmissionLimits;
  /** Accounts with a batch in flight or waiting (and only those: the map does not grow). */
  readonly #lines = new Map<string, Line>();
  /** Accounts with batches waiting, in turn order: one served goes to the back. */
  readonly #turns = new Set<Line>();
  #active = 0;
  #waiting = 0;

  constructor(limits: Partial<BatchAdmissionLimits> = {}) {
    this.#limits = { ...BATCH_ADMISSION_LIMITS, ...limits };
  }

  /** Batches in flight and waiting, for tests and metrics. */
  get counts(): { active: number; waiting: number } {
    return { active: this.#active, waiting: this.#waiting };
  }

  /**
   * Asks for a slot for one of `account`'s batches. `admit` is called once it has one (at once
   * when there is room), or `refuse` once it cannot have one (queue full, or waited too long).
   * The function returned is to be called when the request is over, however it ended: it frees
   * the slot, or withdraws the request from its queue; calling it again does nothing.
   */
  enter(account: string, admit: () => void, refuse: () => void): () => void {
    const line = this.#lines.get(account) ?? { account, active: 0, waiting: [] };
    this.#lines.set(account, line);
    const waiter: Waiter = { line, state: 'waiting', admit, refuse, timer: undefined };
    const leave = () => this.#leave(waiter);
    // After every change the pump has left no waiter that could start, so room now means
    // nobody of this account is waiting ahead of it (FIFO holds).
    if (line.active < this.#limits.perAccount && this.#active < this.#limits.total) {
      this.#start(waiter);
      admit();
      return leave;
    }
    const { waitingPerAccount, waitingTotal, maxWaitMs } = this.#limits;
    if (line.waiting.length >= waitingPerAccount || this.#waiting >= waitingTotal) {
      this.#forget(line);
      waiter.state = 'done';
      refuse();
      return leave;
    }
    line.waiting.push(waiter);
    this.#waiting += 1;
    this.#turns.add(line);
    waiter.timer = setTimeout(() => {
      this.#withdraw(waiter);
      waiter.refuse();
    }, maxWaitMs);
    return leave;
  }

  #start(waiter: Waiter): void {
    waiter.state = 'admitted';
    waiter.line.active += 1;
    this.#active += 1;
  }

  #leave(waiter: Waiter): void {
    if (waiter.state === 'waiting') {
      this.#withdraw(waiter);
      return;
    }
    if (waiter.state !== 'admitted') return;
    waiter.state = 'done';
    waiter.line.active -= 1;
    this.#active -= 1;
    this.#pump();
    this.#forget(waiter.line);
  }

  #withdraw(waiter: Waiter): void {
    const { line } = waiter;
    clearTimeout(waiter.timer);
    waiter.state = 'done';
    line.waiting.splice(line.waiting.indexOf(waiter), 1);
    this.#waiting -= 1;
    if (line.waiting.length === 0) this.#turns.delete(line);
    this.#forget(line);
  }

  /** Hands free slots to waiting batches, one account at a time in turn order. */
  #pump(): void {
    const started: Waiter[] = [];
    while (this.#active < this.#limits.total) {
      let next: Line | undefined;
      for (const line of this.#turns) {
        if (line.active < this.#limits.perAccount) {
          next = line;
          break;
        }
      }
      if (next === undefined) break;
      const waiter = next.waiting.shift() as Waiter;
      clearTimeout(waiter.timer);
      this.#waiting -= 1;
      this.#turns.delete(next);
      if (next.waiting.length > 0) this.#turns.add(next);
      this.#start(waiter);
      started.push(waiter);
    }
    // Called once the counts are settled, so an admit that leaves at once sees them right.
    for (const waiter of started) waiter.admit();
  }

  #forget(line: Line): void {
    if (line.active === 0 && line.waiting.length === 0) this.#lines.delete(line.account);
  }
}

/** The 503 of a batch that found no slot: retry in a second, nothing was stored. */
function refuseBatch(reply: FastifyReply): void {
  const { status, body } = errorBody(new TrackwayError('service_unavailable', BATCHES_BUSY));
  reply.code(status).header('retry-after', 1).send(body);
}

/**
 * The route's onRequest hook: runs after the /v1 hook (authentication, rate limits), so
 * `request.account` is set and a refused or unauthenticated call takes no slot.
 */
export function admitBatch(admission: BatchAdmission): onRequestHookHandler {
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const response = reply.raw;
    // Gone while authenticating: its `close` has been, so it must not take a slot.
    if (response.destroyed || request.raw.socket?.destroyed) return done();
    const leave = admission.enter(
      request.account.id,
      () => done(),
      () => refuseBatch(reply),
    );
    response.once('close', leave);
  };
}
