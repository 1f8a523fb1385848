/**
 * `text/event-stream` read from a fetch body, with no dependency: the parts of the WHATWG
 * Server-Sent Events parser the live tail uses (fields `id`, `event`, `data`; comments and
 * `retry` skipped; lines ended by LF, CRLF or CR; multi-line `data` joined with LF).
 */
import type { EventRecord } from './types.ts';

export interface ServerSentMessage {
  /** The `id` field in force (the last one sent, as the spec's "last event ID" buffer). */
  id: string | undefined;
  event: string;
  data: string;
}

/** Each message of `body`, as it arrives. */
export async function* serverSentMessages(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerSentMessage> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      // A CR at the very end may be the first half of a CRLF: keep it for the next chunk.
      for (
        let end = buffer.search(/\r\n|\r(?!$)|\n/);
        end !== -1;
        end = buffer.search(/\r\n|\r(?!$)|\n/)
      ) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          // A blank line dispatches what was gathered; a message without data is dropped.
          if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let text = colon === -1 ? '' : line.slice(colon + 1);
        if (text.startsWith(' ')) text = text.slice(1);
        if (field === 'data') data.push(text);
        else if (field === 'event') event = text;
        else if (field === 'id' && !text.includes('\0')) id = text;
      }
    }
  } finally {
    // The loop broke early, or the body failed: let go of the connection either way.
    await reader.cancel().catch(() => {});
  }
}

/**
 * A pixel's live tail (`client.events.stream()`): `for await` its events as they are stored.
 * It ends when the server closes the stream (a restart, a deploy) or the signal aborts;
 * connect again with `lastEventId` to receive first what was stored in between.
 */
export class EventStream implements AsyncIterable<EventRecord> {
  /** The arrival number of the last event received: pass it as `lastEventId` to resume. */
  lastEventId: string | undefined;
  readonly #messages: AsyncGenerator<ServerSentMessage>;
  readonly #signal: AbortSignal | undefined;

  constructor(
    body: ReadableStream<Uint8Array>,
    lastEventId: string | undefined,
    signal?: AbortSignal,
  ) {
    this.lastEventId = lastEventId;
    this.#messages = serverSentMessages(body);
    this.#signal = signal;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<EventRecord> {
    try {
      for await (const message of this.#messages) {
        if (message.event !== 'event') continue;
        this.lastEventId = message.id;
        yield JSON.parse(message.data) as EventRecord;
      }
    } catch (error) {
      // Aborting is how the caller stops following: the loop ends, it does not throw.
      if (this.#signal?.aborted) return;
      throw error;
    }
  }

  /** Stops following and closes the connection (also what `break` in the loop does). */
  async close(): Promise<void> {
    await this.#messages.return(undefined);
  }
}
