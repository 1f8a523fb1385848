/**
 * Server-Sent Events for the live tail, shared by the API route and the dashboard: headers,
 * `event` messages with the arrival number as `id` (so `Last-Event-ID` resumes), heartbeat
 * comments that keep proxies from closing an idle stream, and an end on server shutdown.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../domain/context.ts';
import { invalidParameter } from '../domain/errors.ts';
import { eventRecord } from '../domain/events/list-events.ts';
import { followEvents } from '../domain/events/live-tail.ts';

export const DEFAULT_HEARTBEAT_MS = 15_000;

/** Streams open in this process, ended when the server closes (they would hold it open). */
export class OpenStreams {
  private readonly ends = new Set<() => void>();
  add(end: () => void): () => void {
    this.ends.add(end);
    return () => this.ends.delete(end);
  }
  endAll(): void {
    for (const end of [...this.ends]) end();
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

export async function streamEvents(options: {
  ctx: Context;
  pixelId: string;
  request: FastifyRequest;
  reply: FastifyReply;
  streams: OpenStreams;
  heartbeatMs: number;
}): Promise<void> {
  const { ctx, pixelId, request, reply } = options;
  const afterSeq = lastEventId(request);
  const raw = reply.raw;
  const write = (chunk: string) => {
    if (!raw.destroyed) raw.write(chunk);
  };
  // Errors before this point (unknown pixel, bad header) are ordinary JSON error responses.
  const stop = await followEvents({
    ctx,
    pixelId,
    afterSeq,
    send: (events, forwarding) => {
      write(
        events
          .map(
            (e) =>
              `id: ${e.seq}\nevent: event\ndata: ${JSON.stringify(eventRecord(e.event, forwarding.get(e.event.eventId)))}\n\n`,
          )
          .join(''),
      );
    },
    onError: (error) => {
      request.log.error({ err: error }, 'live tail read failed');
      end();
    },
  });
  reply.hijack();
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
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), options.heartbeatMs);
  let ended = false;
  const forget = options.streams.add(() => end());
  function end() {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    stop();
    forget();
    raw.end();
  }
  raw.on('close', end);
}
