/**
 * The queue behind `track()`: events wait until a batch is full (by count or bytes), the
 * interval passes, or `flush()` / `close()` asks; each batch goes to `POST /v1/track/batch`,
 * gzipped. Every event carries an `event_id` before it is queued, so resending a batch whose
 * answer was lost (a timeout, a restart mid-request) stores nothing twice: the server keeps
 * the first and answers the repeat as deduplicated.
 */
import { TrackwayApiError, TrackwayNetworkError } from './errors.ts';
import { backoffMs, type Exchange, exchangeWithRetries, type RetryPolicy, sleep } from './http.ts';
import type { TrackBatchResponse, TrackBatchResult, TrackEvent } from './types.ts';

/** What happened to one tracked event. */
export type TrackResult =
  | {
      ok: true;
      event_id: string;
      status: 200;
      /** The server already had this `event_id`; the first event was kept. */
      deduplicated: boolean;
      message: string;
      warnings?: string[];
    }
  | {
      ok: false;
      event_id: string;
      /** What the server answered for this event, or 0 when it never answered. */
      status: number;
      error: string;
      message: string;
      field?: string;
    };

export interface BatcherOptions {
  maxBatchSize: number;
  flushIntervalMs: number;
  maxConcurrentRequests: number;
  gzip: boolean;
  retry: RetryPolicy;
  onResult: ((result: TrackResult, event: TrackEvent) => void) | undefined;
  /** Sends one encoded batch body; the client adds the URL, key and timeout. */
  post(body: Uint8Array, gzipped: boolean): Promise<Response>;
}

interface Queued {
  event: TrackEvent & { event_id: string };
  json: string;
  bytes: number;
  settle(result: TrackResult): void;
  done: Promise<TrackResult>;
}

/** The server's batch limit is 1,000 events and 524,288 decoded bytes; keep under both. */
export const MAX_BATCH_EVENTS = 1_000;
const MAX_BATCH_BYTES = 500_000;

const encoder = new TextEncoder();

/**
 * `evt_` + a UUIDv7: time-ordered (kind to the server's indexes), random enough to be unique.
 * Built on randomUUID() (one native call) with its first 48 bits replaced by the time in ms.
 */
export function newEventId(now = Date.now()): string {
  const random = crypto.randomUUID();
  const time = now.toString(16).padStart(12, '0');
  return `evt_${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15)}`;
}

/** UTF-8 length; JSON of ASCII-only text (the usual event) is as long as the string. */
function utf8Length(text: string): number {
  return /[\u0080-\uffff]/.test(text) ? encoder.encode(text).length : text.length;
}

type Gzip = (bytes: Uint8Array) => Promise<Uint8Array>;
let nodeGzip: Promise<Gzip | undefined> | undefined;

/**
 * On Node, zlib's gzip on the thread pool: a batch compresses off the event loop and several
 * times faster than CompressionStream there. Level 1: the CPU is the application's, and event
 * JSON still shrinks several-fold. Elsewhere (Deno, Bun, workers), CompressionStream.
 */
function gzipper(): Promise<Gzip | undefined> {
  nodeGzip ??= (async () => {
    if (typeof process === 'undefined' || !process.versions?.node) return undefined;
    try {
      const zlib = await import('node:zlib');
      return (bytes: Uint8Array) =>
        new Promise<Uint8Array>((resolve, reject) =>
          zlib.gzip(bytes, { level: 1 }, (error, out) => (error ? reject(error) : resolve(out))),
        );
    } catch {
      return undefined;
    }
  })();
  return nodeGzip;
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const viaNode = await gzipper();
  if (viaNode) return viaNode(bytes);
  const stream = new Response(bytes).body!.pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export class Batcher {
  private readonly queue: Queued[] = [];
  private readonly unsettled = new Set<Queued>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private active = 0;
  /** Send what is queued even below a full batch (interval passed, flush or close asked). */
  private flushing = false;
  private readonly options: BatcherOptions;
  private readonly canGzip: boolean;

  constructor(options: BatcherOptions) {
    this.options = options;
    this.canGzip = options.gzip && typeof CompressionStream === 'function';
  }

  enqueue(input: TrackEvent): Promise<TrackResult> {
    const event = { ...input, event_id: input.event_id ?? newEventId() };
    const json = JSON.stringify(event);
    let settle!: (result: TrackResult) => void;
    const done = new Promise<TrackResult>((resolve) => {
      settle = resolve;
    });
    const item: Queued = { event, json, bytes: utf8Length(json) + 1, settle, done };
    this.queue.push(item);
    this.unsettled.add(item);
    if (this.queue.length >= this.options.maxBatchSize) this.pump();
    else this.timer ??= setTimeout(() => this.flushSoon(), this.options.flushIntervalMs);
    return done;
  }

  /** Resolves with the results of every event tracked before the call. */
  async flush(): Promise<TrackResult[]> {
    const waiting = [...this.unsettled].map((item) => item.done);
    this.flushSoon();
    return Promise.all(waiting);
  }

  get pending(): number {
    return this.unsettled.size;
  }

  private flushSoon(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    this.flushing = true;
    this.pump();
  }

  private pump(): void {
    while (this.active < this.options.maxConcurrentRequests && this.ready()) {
      this.active += 1;
      const batch = this.takeBatch();
      void this.send(batch).finally(() => {
        this.active -= 1;
        this.pump();
      });
    }
    if (this.queue.length === 0) {
      this.flushing = false;
      clearTimeout(this.timer);
      this.timer = undefined;
    } else if (!this.ready()) {
      this.timer ??= setTimeout(() => this.flushSoon(), this.options.flushIntervalMs);
    }
  }

  private ready(): boolean {
    return (
      this.queue.length >= this.options.maxBatchSize || (this.flushing && this.queue.length > 0)
    );
  }

  private takeBatch(): Queued[] {
    let count = 0;
    let bytes = 12;
    while (count < this.options.maxBatchSize && count < this.queue.length) {
      const next = this.queue[count]!;
      if (count > 0 && bytes + next.bytes > MAX_BATCH_BYTES) break;
      bytes += next.bytes;
      count += 1;
    }
    // One splice per batch: shift() per event is quadratic on a long queue.
    return this.queue.splice(0, count);
  }

  private settle(item: Queued, result: TrackResult): void {
    this.unsettled.delete(item);
    item.settle(result);
    try {
      this.options.onResult?.(result, item.event);
    } catch {
      // A throwing callback must not stall the queue; it is the caller's code to fix.
    }
  }

  private failAll(items: Queued[], status: number, error: string, message: string): void {
    for (const item of items) {
      this.settle(item, { ok: false, event_id: item.event.event_id, status, error, message });
    }
  }

  /**
   * Sends `batch` until every event in it has a final answer. Events the server answers with
   * 500 in their slot ("not stored; safe to retry") are sent again with the same ids.
   */
  private async send(batch: Queued[]): Promise<void> {
    let waiting = batch;
    for (let round = 0; waiting.length > 0; round++) {
      let exchange: Exchange;
      try {
        exchange = await exchangeWithRetries(
          async () => {
            const raw = encoder.encode(`{"events":[${waiting.map((q) => q.json).join(',')}]}`);
            return this.options.post(this.canGzip ? await gzip(raw) : raw, this.canGzip);
          },
          this.options.retry,
          true,
        );
      } catch (error) {
        if (error instanceof TrackwayApiError && error.status === 413 && waiting.length > 1) {
          // Bigger than the server takes after all: halve it and send both halves.
          const half = Math.ceil(waiting.length / 2);
          await this.send(waiting.slice(0, half));
          await this.send(waiting.slice(half));
          return;
        }
        if (error instanceof TrackwayApiError) {
          this.failAll(waiting, error.status, error.error, error.message);
        } else {
          const message = error instanceof TrackwayNetworkError ? error.message : String(error);
          this.failAll(waiting, 0, 'Network error', message);
        }
        return;
      }
      const results = (exchange.body as TrackBatchResponse).results;
      const retry: Queued[] = [];
      for (const [index, item] of waiting.entries()) {
        const slot: TrackBatchResult | undefined = results[index];
        if (slot?.status === 200) {
          this.settle(item, {
            ok: true,
            status: 200,
            event_id: slot.event_id ?? item.event.event_id,
            deduplicated: slot.deduplicated === true,
            message: slot.message,
            ...(slot.warnings && { warnings: slot.warnings }),
          });
        } else if (slot && slot.status >= 500 && round < this.options.retry.maxRetries) {
          retry.push(item);
        } else {
          this.settle(item, {
            ok: false,
            event_id: item.event.event_id,
            status: slot?.status ?? 0,
            error: slot?.error ?? 'Invalid response',
            message: slot?.message ?? 'No result for this event in the batch response',
            ...(slot?.field !== undefined && { field: slot.field }),
          });
        }
      }
      waiting = retry;
      if (waiting.length > 0) await sleep(backoffMs(round, this.options.retry));
    }
  }
}
