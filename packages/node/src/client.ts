/**
 * `new Trackway({ apiKey, baseUrl })`: batched `track()` plus one typed method per API
 * operation. Every operation is one row of OPERATIONS (checked against the generated types, so
 * a route added to the server's document fails to compile here until it has its row) and one
 * method calling `call()`.
 */
import {
  Batcher,
  type BatcherOptions,
  MAX_BATCH_EVENTS,
  newEventId as newId,
  type TrackResult,
} from './batcher.ts';
import { TrackwayApiError, TrackwayNetworkError } from './errors.ts';
import { EventStream } from './event-stream.ts';
import { exchangeWithRetries, type RetryPolicy } from './http.ts';
import type {
  EventRecord,
  OperationId,
  operations,
  QueryOf,
  RequestBody,
  ResponseBody,
  TrackEvent,
} from './types.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Method and path of every operation in openapi.json, by operationId. */
const OPERATIONS = {
  getHealth: ['GET', '/healthz'],
  getReadiness: ['GET', '/readyz'],
  trackEvent: ['POST', '/v1/track'],
  trackEventBatch: ['POST', '/v1/track/batch'],
  validateEvent: ['POST', '/v1/track/validate'],
  listPixels: ['GET', '/v1/pixels'],
  createPixel: ['POST', '/v1/pixels'],
  getPixel: ['GET', '/v1/pixels/{pixel_id}'],
  updatePixel: ['PATCH', '/v1/pixels/{pixel_id}'],
  rotatePublishableKey: ['POST', '/v1/pixels/{pixel_id}/publishable-key/rotate'],
  // The browser snippet's route (publishable key, Origin checked): listed, not wrapped.
  collectEvent: ['POST', '/v1/collect'],
  listEvents: ['GET', '/v1/pixels/{pixel_id}/events'],
  listWebhooks: ['GET', '/v1/webhooks'],
  createWebhook: ['POST', '/v1/webhooks'],
  getWebhook: ['GET', '/v1/webhooks/{webhook_id}'],
  updateWebhook: ['PATCH', '/v1/webhooks/{webhook_id}'],
  deleteWebhook: ['DELETE', '/v1/webhooks/{webhook_id}'],
  rotateWebhookSecret: ['POST', '/v1/webhooks/{webhook_id}/rotate-secret'],
  listWebhookDeliveries: ['GET', '/v1/webhooks/{webhook_id}/deliveries'],
  retryWebhookDelivery: ['POST', '/v1/webhooks/{webhook_id}/deliveries/{message_id}/retry'],
  sendTestWebhook: ['POST', '/v1/webhooks/{webhook_id}/test'],
  listKeys: ['GET', '/v1/keys'],
  createKey: ['POST', '/v1/keys'],
  revokeKey: ['DELETE', '/v1/keys/{key_id}'],
  getPixelStats: ['GET', '/v1/pixels/{pixel_id}/stats'],
  erasePersonData: ['POST', '/v1/pixels/{pixel_id}/erasure'],
  listDestinations: ['GET', '/v1/pixels/{pixel_id}/destinations'],
  createDestination: ['POST', '/v1/pixels/{pixel_id}/destinations'],
  getDestination: ['GET', '/v1/pixels/{pixel_id}/destinations/{destination_id}'],
  updateDestination: ['PATCH', '/v1/pixels/{pixel_id}/destinations/{destination_id}'],
  deleteDestination: ['DELETE', '/v1/pixels/{pixel_id}/destinations/{destination_id}'],
  replayDestination: ['POST', '/v1/pixels/{pixel_id}/destinations/{destination_id}/replay'],
  testDestination: ['POST', '/v1/pixels/{pixel_id}/destinations/{destination_id}/test'],
  getEvent: ['GET', '/v1/pixels/{pixel_id}/events/{event_id}'],
  // Server-Sent Events, not one JSON answer: call() cannot read it; events.stream() does.
  streamEvents: ['GET', '/v1/pixels/{pixel_id}/events/stream'],
  // ndjson or csv, streamed: events.export() reads it.
  exportEvents: ['GET', '/v1/pixels/{pixel_id}/events/export'],
} as const satisfies { [O in OperationId]: readonly [Method, string] };

/**
 * Operations that are safe to send twice, so a 5xx or network failure is retried. Creating
 * something, rotating a secret or sending a test message is not: those retry only 429 (which
 * the server answers before doing anything) and otherwise report the failure.
 */
const RETRY_SERVER_ERRORS: ReadonlySet<OperationId> = new Set<OperationId>([
  'getHealth',
  'getReadiness',
  'trackEvent', // idempotent once an event_id is set, which track methods ensure
  'trackEventBatch',
  'validateEvent', // stores and sends nothing
  'listPixels',
  'getPixel',
  'updatePixel',
  'listEvents',
  'listWebhooks',
  'getWebhook',
  'updateWebhook',
  'deleteWebhook',
  'listWebhookDeliveries',
  'retryWebhookDelivery',
  'listKeys',
  'revokeKey',
  'getPixelStats',
  'listDestinations',
  'getDestination',
  'updateDestination',
  'deleteDestination',
  'getEvent',
]);

type PathParams<O extends OperationId> = NonNullable<operations[O]['parameters']['path']>;

interface CallArgs<O extends OperationId> {
  path?: PathParams<O>;
  query?: QueryOf<O>;
  body?: RequestBody<O>;
}

export interface TrackwayOptions {
  /** A `tw_live_…` key. */
  apiKey: string;
  /** The server's origin, without `/v1`. Default `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Events per batch, 1 to 1,000. Default 100. */
  maxBatchSize?: number;
  /** Most time an event waits for its batch to fill, in ms. Default 1,000. */
  flushInterval?: number;
  /** Batches in flight at once. Default 1. */
  maxConcurrentRequests?: number;
  /** Gzip batches (when the runtime has CompressionStream). Default true. */
  gzip?: boolean;
  /** Retries after the first attempt. Default 10 (about a minute of backoff). */
  maxRetries?: number;
  /** First backoff step in ms, doubled each retry. Default 200. */
  retryBaseDelay?: number;
  /** Longest backoff step in ms. Default 10,000. */
  retryMaxDelay?: number;
  /** Per-request timeout in ms. Default 30,000. */
  timeout?: number;
  /** Called once per tracked event with its outcome (also what `track()` resolves to). */
  onResult?: (result: TrackResult, event: TrackEvent) => void;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
}

export class Trackway {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly retry: RetryPolicy;
  private readonly timeout: number;
  private readonly batcher: Batcher;
  private closed = false;

  constructor(options: TrackwayOptions) {
    if (!options?.apiKey) throw new TypeError('Trackway: apiKey is required');
    this.apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.retry = {
      maxRetries: options.maxRetries ?? 10,
      baseDelayMs: options.retryBaseDelay ?? 200,
      maxDelayMs: options.retryMaxDelay ?? 10_000,
    };
    this.timeout = options.timeout ?? 30_000;
    const batcherOptions: BatcherOptions = {
      maxBatchSize: Math.min(Math.max(1, options.maxBatchSize ?? 100), MAX_BATCH_EVENTS),
      flushIntervalMs: options.flushInterval ?? 1_000,
      maxConcurrentRequests: Math.max(1, options.maxConcurrentRequests ?? 1),
      gzip: options.gzip ?? true,
      retry: this.retry,
      onResult: options.onResult,
      post: (body, gzipped) =>
        this.send('POST', '/v1/track/batch', body, gzipped ? { 'content-encoding': 'gzip' } : {}),
    };
    this.batcher = new Batcher(batcherOptions);
  }

  /**
   * Queues an event for the next batch and resolves with its outcome once the batch is
   * answered (never rejects: a refused event resolves with `ok: false`). An `event_id` is made
   * when none is given, so a retried batch is deduplicated by the server.
   */
  track(event: TrackEvent): Promise<TrackResult> {
    if (this.closed) throw new Error('Trackway: track() after close()');
    return this.batcher.enqueue(event);
  }

  /** Sends everything queued now and resolves with those events' outcomes. */
  flush(): Promise<TrackResult[]> {
    return this.batcher.flush();
  }

  /** Flushes, then refuses further `track()` calls. */
  async close(): Promise<TrackResult[]> {
    this.closed = true;
    return this.batcher.flush();
  }

  /** Events queued or in flight. */
  get pendingEvents(): number {
    return this.batcher.pending;
  }

  readonly pixels = {
    list: (query?: QueryOf<'listPixels'>) => this.call('listPixels', { query }),
    create: (body: RequestBody<'createPixel'>) => this.call('createPixel', { body }),
    get: (pixelId: string) => this.call('getPixel', { path: { pixel_id: pixelId } }),
    update: (pixelId: string, body: RequestBody<'updatePixel'>) =>
      this.call('updatePixel', { path: { pixel_id: pixelId }, body }),
    /** A new publishable key; the old one keeps working on /v1/collect for 24 hours. */
    rotatePublishableKey: (pixelId: string) =>
      this.call('rotatePublishableKey', { path: { pixel_id: pixelId } }),
    /**
     * Erases one person's events (a data-subject request): `{deleted}`. Not retried on a 5xx,
     * so `deleted` always counts what this call removed.
     */
    erase: (pixelId: string, body: RequestBody<'erasePersonData'>) =>
      this.call('erasePersonData', { path: { pixel_id: pixelId }, body }),
  };

  readonly stats = {
    /** Events and revenue per hour or day, from the per-bucket counts. */
    get: (pixelId: string, query?: QueryOf<'getPixelStats'>) =>
      this.call('getPixelStats', { path: { pixel_id: pixelId }, query }),
  };

  readonly keys = {
    /** One page (`limit` default 50, at most 100; `offset`), oldest first, with `total`. */
    list: (query?: QueryOf<'listKeys'>) => this.call('listKeys', { query }),
    /** The answer's `key` is shown this once. */
    create: (body: RequestBody<'createKey'>) => this.call('createKey', { body }),
    revoke: (keyId: string) => this.call('revokeKey', { path: { key_id: keyId } }),
  };

  readonly events = {
    /** One stored event with its forwarding entries and their attempt ledgers. */
    get: (pixelId: string, eventId: string) =>
      this.call('getEvent', { path: { pixel_id: pixelId, event_id: eventId } }),
    /** One event at once, unbatched (`POST /v1/track`); an `event_id` is made if missing. */
    track: (event: TrackEvent) =>
      this.call('trackEvent', { body: { ...event, event_id: event.event_id ?? newId() } }),
    /** Up to 1,000 events in one request, unqueued; the answer has one slot per event. */
    trackBatch: (events: TrackEvent[]) =>
      this.call('trackEventBatch', {
        body: { events: events.map((e) => ({ ...e, event_id: e.event_id ?? newId() })) },
      }),
    /**
     * What `track` would store for this event and what each destination would be sent, without
     * storing or sending anything (`POST /v1/track/validate`).
     */
    validate: (event: TrackEvent) => this.call('validateEvent', { body: event }),
    list: (pixelId: string, query?: QueryOf<'listEvents'>) =>
      this.call('listEvents', { path: { pixel_id: pixelId }, query }),
    /** Every page of `list`, fetched as the loop asks for it. */
    pages: (pixelId: string, query?: QueryOf<'listEvents'>) => this.pages(pixelId, query),
    /** Every matching event, newest first: `for await (const event of …)`. */
    iterate: (pixelId: string, query?: QueryOf<'listEvents'>) => this.iterate(pixelId, query),
    /**
     * The pixel's live tail: resolves once the stream is open (so every event stored after
     * that arrives), then `for await (const event of stream)`. With `lastEventId` (a previous
     * stream's `lastEventId`), the events stored since come first. Not retried: an unknown
     * pixel or a bad key rejects with TrackwayApiError.
     */
    stream: (pixelId: string, options: { lastEventId?: string; signal?: AbortSignal } = {}) =>
      this.stream(pixelId, options),
    /**
     * Every matching event, oldest first, as ndjson (default) or csv: the response body as it
     * arrives, so an export of millions of events never sits in memory.
     */
    export: (pixelId: string, query: QueryOf<'exportEvents'> = {}, signal?: AbortSignal) =>
      this.exportEvents(pixelId, query, signal),
  };

  readonly webhooks = {
    list: () => this.call('listWebhooks', {}),
    create: (body: RequestBody<'createWebhook'>) => this.call('createWebhook', { body }),
    get: (webhookId: string) => this.call('getWebhook', { path: { webhook_id: webhookId } }),
    update: (webhookId: string, body: RequestBody<'updateWebhook'>) =>
      this.call('updateWebhook', { path: { webhook_id: webhookId }, body }),
    delete: (webhookId: string) => this.call('deleteWebhook', { path: { webhook_id: webhookId } }),
    rotateSecret: (webhookId: string) =>
      this.call('rotateWebhookSecret', { path: { webhook_id: webhookId } }),
    listDeliveries: (webhookId: string, query?: QueryOf<'listWebhookDeliveries'>) =>
      this.call('listWebhookDeliveries', { path: { webhook_id: webhookId }, query }),
    retryDelivery: (webhookId: string, messageId: string) =>
      this.call('retryWebhookDelivery', {
        path: { webhook_id: webhookId, message_id: messageId },
      }),
    sendTest: (webhookId: string, body?: RequestBody<'sendTestWebhook'>) =>
      this.call('sendTestWebhook', { path: { webhook_id: webhookId }, ...(body && { body }) }),
  };

  /** A pixel's destinations: where its events are forwarded (Meta's Conversions API). */
  readonly destinations = {
    list: (pixelId: string) => this.call('listDestinations', { path: { pixel_id: pixelId } }),
    create: (pixelId: string, body: RequestBody<'createDestination'>) =>
      this.call('createDestination', { path: { pixel_id: pixelId }, body }),
    get: (pixelId: string, destinationId: string) =>
      this.call('getDestination', {
        path: { pixel_id: pixelId, destination_id: destinationId },
      }),
    update: (pixelId: string, destinationId: string, body: RequestBody<'updateDestination'>) =>
      this.call('updateDestination', {
        path: { pixel_id: pixelId, destination_id: destinationId },
        body,
      }),
    delete: (pixelId: string, destinationId: string) =>
      this.call('deleteDestination', {
        path: { pixel_id: pixelId, destination_id: destinationId },
      }),
    /** Sends a time range of events again; answers how many were queued. */
    replay: (pixelId: string, destinationId: string, body: RequestBody<'replayDestination'>) =>
      this.call('replayDestination', {
        path: { pixel_id: pixelId, destination_id: destinationId },
        body,
      }),
    /** Sends one event (a stored one, or a sample) in the platform's test mode. */
    sendTest: (pixelId: string, destinationId: string, body?: RequestBody<'testDestination'>) =>
      this.call('testDestination', {
        path: { pixel_id: pixelId, destination_id: destinationId },
        ...(body && { body }),
      }),
  };

  /** `GET /healthz`: the process is up. */
  health() {
    return this.call('getHealth', {});
  }

  /** `GET /readyz`: storage is reachable (throws TrackwayApiError 503 when not). */
  ready() {
    return this.call('getReadiness', {});
  }

  /**
   * Any operation by its operationId, typed from openapi.json; what the methods above call.
   * Throws TrackwayApiError for an error answer, TrackwayNetworkError when none came.
   */
  async call<O extends OperationId>(operation: O, args: CallArgs<O>): Promise<ResponseBody<O>> {
    const [method, template] = OPERATIONS[operation];
    const params = (args.path ?? {}) as Record<string, string>;
    let path = template.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(params[name] ?? ''),
    );
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries((args.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined) query.set(key, String(value));
    }
    if (query.size > 0) path += `?${query}`;
    const body =
      args.body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(args.body));
    const exchange = await exchangeWithRetries(
      () => this.send(method, path, body),
      this.retry,
      RETRY_SERVER_ERRORS.has(operation),
    );
    return exchange.body as ResponseBody<O>;
  }

  private send(
    method: Method,
    path: string,
    body: Uint8Array | undefined,
    extraHeaders: Record<string, string> = {},
  ): Promise<Response> {
    return this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        accept: 'application/json',
        ...(body && { 'content-type': 'application/json' }),
        ...extraHeaders,
      },
      ...(body && { body }),
      signal: AbortSignal.timeout(this.timeout),
    });
  }

  private async stream(
    pixelId: string,
    { lastEventId, signal }: { lastEventId?: string; signal?: AbortSignal },
  ): Promise<EventStream> {
    const path = OPERATIONS.streamEvents[1].replace('{pixel_id}', encodeURIComponent(pixelId));
    const body = await this.openBody(
      path,
      {
        accept: 'text/event-stream',
        ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
      },
      signal,
    );
    return new EventStream(body, lastEventId, signal);
  }

  private async exportEvents(
    pixelId: string,
    query: QueryOf<'exportEvents'>,
    signal?: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const path = OPERATIONS.exportEvents[1].replace('{pixel_id}', encodeURIComponent(pixelId));
    const search = new URLSearchParams(
      Object.entries(query ?? {}).flatMap(([k, v]): [string, string][] =>
        v === undefined ? [] : [[k, String(v)]],
      ),
    ).toString();
    return this.openBody(search ? `${path}?${search}` : path, {}, signal);
  }

  /**
   * A GET whose answer is read as it arrives (a live tail, an export): no timeout, since it
   * lasts as long as the caller reads, and no retry, since part of it may already be consumed.
   */
  private async openBody(
    pathAndQuery: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<ReadableStream<Uint8Array>> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${pathAndQuery}`, {
        headers: { authorization: `Bearer ${this.apiKey}`, ...headers },
        ...(signal && { signal }),
      });
    } catch (error) {
      throw new TrackwayNetworkError(`Request failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (!response.ok || response.body === null) {
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      throw new TrackwayApiError(response.status, body as never);
    }
    return response.body;
  }

  private async *pages(pixelId: string, query: QueryOf<'listEvents'> = {}) {
    let offset = query.offset ?? 0;
    for (;;) {
      const page = await this.events.list(pixelId, { ...query, offset });
      yield page;
      offset += page.events.length;
      if (page.events.length === 0 || offset >= page.total) return;
    }
  }

  /**
   * Pages are newest first by offset, so events stored while the loop runs push older ones
   * down: the next page may start with events already yielded. Those are skipped (compared
   * with the previous page), so each event is yielded once as long as fewer than a page's
   * worth arrive between two pages.
   */
  private async *iterate(
    pixelId: string,
    query?: QueryOf<'listEvents'>,
  ): AsyncGenerator<EventRecord> {
    let previous = new Set<string>();
    for await (const page of this.pages(pixelId, query)) {
      for (const event of page.events) if (!previous.has(event.event_id)) yield event;
      previous = new Set(page.events.map((event) => event.event_id));
    }
  }
}
