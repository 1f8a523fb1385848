/**
 * Server-Sent Events for the live tail, shared by the API route and the dashboard: headers,
 * `event` messages with the arrival number as `id` (so `Last-Event-ID` resumes), heartbeat
 * comments that keep proxies from closing an idle stream, and an end on server shutdown.
 *
 * Fair to everyone else (contract §21): at most 20 open streams an account (stream-slots.ts);
 * a stream whose client does not read is closed once 1 MB waits unsent in this process; a
 * stream ends within a second of its key's revocation or its dashboard session's end; and
 * every stream of a pixel is served by one read per commit (LiveTailHub).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../domain/context.ts';
import { invalidParameter, RateLimitedError } from '../domain/errors.ts';
import { eventRecord } from '../domain/events/list-events.ts';
import { followEvents, LiveTailHub, type TailBatch } from '../domain/events/live-tail.ts';
import type { Clock } from '../domain/ports/clock.ts';
import type { Store } from '../domain/ports/store.ts';
import {
  MemoryStreamSlots,
  STREAMS_PER_ACCOUNT,
  type StreamSlots,
} from '../rate-limit/stream-slots.ts';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Unsent data a stream may leave buffered in this process before it is closed. */
export const MAX_UNSENT_BYTES = 1024 * 1024;
/** How often open streams' keys and sessions are checked: a revocation ends them within 1 s. */
export const CREDENTIAL_CHECK_MS = 400;
/** How often the slots of open streams are renewed (well inside STREAM_SLOT_TTL_MS). */
const RENEW_EVERY_CHECKS = 25;
/** A refused 21st stream is told to try again after this long. */
const STREAM_RETRY_AFTER_S = 5;

/** What a stream was opened with: checked again while it is open. */
export type StreamCredential =
  | { kind: 'key'; keyId: string }
  | { kind: 'session'; tokenHash: string };

interface OpenStream {
  accountId: string;
  streamId: string;
  credential: StreamCredential;
  end: () => void;
}

/**
 * The streams open in this process: their slots, the credential check, the shared reads, and
 * their end when the server closes (they would hold it open).
 */
export class OpenStreams {
  readonly hub: LiveTailHub;
  private readonly open = new Set<OpenStream>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private checks = 0;
  private readonly slots: StreamSlots;

  constructor(
    private readonly deps: {
      store: Pick<Store, 'feed' | 'forwarding' | 'keys' | 'sessions'>;
      clock: Clock;
      slots?: StreamSlots;
      onError: (error: unknown, message: string) => void;
      checkMs?: number;
    },
  ) {
    this.slots = deps.slots ?? new MemoryStreamSlots();
    this.hub = new LiveTailHub(deps.store, (error) => deps.onError(error, 'live tail read failed'));
  }

  get size(): number {
    return this.open.size;
  }

  /**
   * Takes one of the account's slots for a stream (429 when it holds them all); the function
   * returned forgets the stream and frees its slot.
   */
  async add(accountId: string, credential: StreamCredential, end: () => void): Promise<() => void> {
    const streamId = randomUUID();
    if (!(await this.slots.acquire(accountId, streamId))) {
      throw new RateLimitedError(
        STREAM_RETRY_AFTER_S,
        `At most ${STREAMS_PER_ACCOUNT} live-tail streams may be open at once for an account; close one first.`,
      );
    }
    const stream: OpenStream = { accountId, streamId, credential, end };
    this.open.add(stream);
    this.timer ??= setInterval(() => void this.check(), this.deps.checkMs ?? CREDENTIAL_CHECK_MS);
    this.timer.unref();
    return () => {
      if (!this.open.delete(stream)) return;
      this.slots.release(accountId, streamId);
      if (this.open.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  endAll(): void {
    for (const stream of [...this.open]) stream.end();
  }

  /** Ends the streams whose key was revoked or whose session ended (on any instance). */
  private async check(): Promise<void> {
    if (this.checking || this.open.size === 0) return;
    this.checking = true;
    try {
      const streams = [...this.open];
      if (++this.checks % RENEW_EVERY_CHECKS === 0) this.slots.renew(streams);
      const accounts = new Set<string>();
      const sessions = new Set<string>();
      for (const s of streams) {
        if (s.credential.kind === 'key') accounts.add(s.accountId);
        else sessions.add(s.credential.tokenHash);
      }
      const liveKeys = new Set<string>();
      for (const accountId of accounts) {
        for (const key of await this.deps.store.keys.listKeys(accountId)) {
          if (key.revokedAt === null) liveKeys.add(key.id);
        }
      }
      const now = this.deps.clock.now();
      const liveSessions = new Set<string>();
      for (const tokenHash of sessions) {
        if (await this.deps.store.sessions.findSession(tokenHash, now)) liveSessions.add(tokenHash);
      }
      for (const s of streams) {
        const live =
          s.credential.kind === 'key'
            ? liveKeys.has(s.credential.keyId)
            : liveSessions.has(s.credential.tokenHash);
        if (!live) s.end();
      }
    } catch (error) {
      // A store outage: streams stay open, and the next check tries again.
      this.deps.onError(error, 'live tail credential check failed');
    } finally {
      this.checking = false;
    }
  }
}

/** `Last-Event-ID`: the arrival number of the last event the client saw; `null` when absent. */
export function lastEventId(request: FastifyRequest): number | null {
  const header = request.headers['last-event-id'];
  if (header === undefined || header === '') return null;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value)) {
    throw invalidParameter('Last-Event-ID', 'must be the id of an event received from this stream');
  }
  return Number(value);
}

/** A batch's messages, rendered once however many streams of the pixel it goes to. */
const rendered = new WeakMap<TailBatch, string>();

function messages(batch: TailBatch): string {
  let text = rendered.get(batch);
  if (text === undefined) {
    text = batch.events
      .map(
        (e) =>
          `id: ${e.seq}\nevent: event\ndata: ${JSON.stringify(eventRecord(e.event, batch.forwarding.get(e.event.eventId)))}\n\n`,
      )
      .join('');
    rendered.set(batch, text);
  }
  return text;
}

export async function streamEvents(options: {
  ctx: Context;
  pixelId: string;
  request: FastifyRequest;
  reply: FastifyReply;
  streams: OpenStreams;
  credential: StreamCredential;
  heartbeatMs: number;
}): Promise<void> {
  const { ctx, pixelId, request, reply, streams } = options;
  const afterSeq = lastEventId(request);
  const raw = reply.raw;
  let ended = false;
  /** The response has begun (hijacked): ending it ends the connection. */
  let started = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let stop = () => {};
  let forget = () => {};
  function end(): void {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    stop();
    forget();
    if (started) raw.end();
  }
  const write = (chunk: string) => {
    if (ended || raw.destroyed) return;
    // A client that stops reading would otherwise have the server keep every event for it
    // (20 such streams and 3,000 events of 15 KB: 1.5 GB, issue 30). Checked before adding
    // more, so one large commit still reaches a client that keeps up. What it has not taken
    // is dropped with the connection; `Last-Event-ID` resumes from what it did receive.
    if (raw.writableLength > MAX_UNSENT_BYTES) {
      request.log.warn(
        { pixel_id: pixelId, unsent_bytes: raw.writableLength },
        'live tail closed: the client is not reading',
      );
      end();
      raw.destroy();
      return;
    }
    raw.write(chunk);
  };
  // Errors before this point (too many streams, unknown pixel, bad header) are ordinary JSON
  // error responses.
  forget = await streams.add(ctx.account.id, options.credential, end);
  try {
    stop = await followEvents({
      ctx,
      hub: streams.hub,
      pixelId,
      afterSeq,
      send: (batch) => write(messages(batch)),
      onError: (error) => {
        request.log.error({ err: error }, 'live tail read failed');
        end();
      },
    });
  } catch (error) {
    forget();
    throw error;
  }
  if (ended) {
    // Its key was revoked (or the server began closing) while it was being set up.
    stop();
    reply.code(204).send();
    return;
  }
  reply.hijack();
  started = true;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    // nginx and similar would otherwise buffer the stream.
    'x-accel-buffering': 'no',
  });
  // A reconnecting client waits 2 s; the first comment flushes the headers at once.
  write('retry: 2000\n: connected\n\n');
  heartbeat = setInterval(() => write(': heartbeat\n\n'), options.heartbeatMs);
  raw.on('close', end);
}
