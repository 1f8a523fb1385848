/**
 * buildApp(deps) assembles the HTTP layer and never listens: tests call `app.inject()`, main.ts
 * calls `listen()`. Routes validate with the TypeBox schemas they declare (which also generate
 * the OpenAPI document), call one domain verb, and let errors.ts map failures.
 */
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import sjson from 'secure-json-parse';
import type { Config } from '../config.ts';
import { ApiKeyCache } from '../domain/accounts/key-cache.ts';
import { TrackwayError } from '../domain/errors.ts';
import { KeyUsage } from '../domain/keys/key-usage.ts';
import { assertScopeAllows } from '../domain/keys/keys.ts';
import type { Account } from '../domain/model.ts';
import { pixelForTracking } from '../domain/pixels/pixel-cache.ts';
import { compileValidator } from '../domain/validation.ts';
import { authenticateRequest, KeyHashes } from './auth.ts';
import { decodeBody } from './content-encoding.ts';
import { registerDashboard } from './dashboard/plugin.ts';
import type { App, AppDeps } from './deps.ts';
import { registerDocsPage } from './docs/docs-page.ts';
import { errorBody, handleClientError, handleError, MAX_BODY_BYTES } from './errors.ts';
import { LazyChildLogger } from './lazy-logger.ts';
import { createMetrics } from './metrics.ts';
import { finishOpenApiDocument, OPENAPI_BASE } from './openapi-document.ts';
import { limitAccount, limitAuthFailure } from './rate-limit.ts';
import { compileSchemaValidator, NoBodySchema, NoQuerySchema } from './route-kit.ts';
import { RouteMethods } from './route-methods.ts';
import { registerCollect } from './routes/collect.post.ts';
import { registerCollectPreflight } from './routes/collect.preflight.ts';
import { registerCreateDestination } from './routes/destinations.create.ts';
import { registerDeleteDestination } from './routes/destinations.delete.ts';
import { registerGetDestination } from './routes/destinations.get.ts';
import { registerListDestinations } from './routes/destinations.list.ts';
import { registerReplayDestination } from './routes/destinations.replay.ts';
import { registerTestDestination } from './routes/destinations.test-send.ts';
import { registerUpdateDestination } from './routes/destinations.update.ts';
import { registerExportEvents } from './routes/events.export.ts';
import { registerGetEvent } from './routes/events.get.ts';
import { registerListEvents } from './routes/events.list.ts';
import { registerStreamEvents } from './routes/events.stream.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerCreateKey } from './routes/keys.create.ts';
import { registerRevokeKey } from './routes/keys.delete.ts';
import { registerListKeys } from './routes/keys.list.ts';
import { registerPixelScript } from './routes/pixel-script.get.ts';
import { registerCreatePixel } from './routes/pixels.create.ts';
import { registerErasure } from './routes/pixels.erasure.ts';
import { registerGetPixel } from './routes/pixels.get.ts';
import { registerListPixels } from './routes/pixels.list.ts';
import { registerRotatePublishableKey } from './routes/pixels.rotate-publishable-key.ts';
import { registerUpdatePixel } from './routes/pixels.update.ts';
import { registerGetStats } from './routes/stats.get.ts';
import { registerTrackBatch } from './routes/track.batch.post.ts';
import { registerTrack } from './routes/track.post.ts';
import { registerValidateTrack } from './routes/track.validate.ts';
import { registerCreateWebhook } from './routes/webhooks.create.ts';
import { registerDeleteWebhook } from './routes/webhooks.delete.ts';
import { registerListDeliveries } from './routes/webhooks.deliveries.list.ts';
import { registerRetryDelivery } from './routes/webhooks.deliveries.retry.ts';
import { registerGetWebhook } from './routes/webhooks.get.ts';
import { registerListWebhooks } from './routes/webhooks.list.ts';
import { registerRotateWebhookSecret } from './routes/webhooks.rotate-secret.ts';
import { registerTestWebhook } from './routes/webhooks.test-send.ts';
import { registerUpdateWebhook } from './routes/webhooks.update.ts';
import { OpenStreams } from './sse.ts';

export type { App, AppDeps };

// Ids in paths are checked by the routes (an unknown one is a 404 like any other), not cut off
// by the router at its default of 100 characters. Shared with RouteMethods, which must match
// paths exactly as the router does.
const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 2_048 };

/** Requests slower than this are logged; nothing else is logged per request (hot path). */
const SLOW_REQUEST_MS = 1_000;

/** How often a draining server closes the connections that have fallen idle. */
const IDLE_REAP_MS = 100;

/** Deeper than any real event; far shallower than what would exhaust the stack downstream. */
const MAX_JSON_DEPTH = 64;

/** True when arrays/objects nest deeper than `max` (strings skipped): one linear pass. */
function nestedTooDeep(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

/** How many `{` and `[` the text holds (inside strings too), counting no further than `max + 1`. */
function openings(text: string, max: number): number {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (
      let i = text.indexOf(bracket);
      i !== -1 && count <= max;
      i = text.indexOf(bracket, i + 1)
    ) {
      count++;
    }
  }
  return count;
}

/**
 * Whether secure-json-parse could find a forbidden key: `__proto__` or `constructor`, spelled
 * out or with \u escapes. Without any of those substrings (and without a byte-order mark,
 * which it strips) it returns what JSON.parse returns, so JSON.parse is called directly and
 * its two regular-expression scans of the body are skipped.
 */
function needsSecureParse(text: string): boolean {
  return (
    text.charCodeAt(0) === 0xfeff ||
    text.includes('\\u') ||
    text.includes('__proto__') ||
    text.includes('constructor')
  );
}

export function parseJson(body: string, envelopeDepth: number): unknown {
  // Nesting deeper than the limit needs more brackets than that: most bodies skip the scan.
  const max = MAX_JSON_DEPTH + envelopeDepth;
  if (openings(body, max) > max && nestedTooDeep(body, max)) {
    throw new TrackwayError(
      'invalid_request',
      `Malformed JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  }
  try {
    if (!needsSecureParse(body)) return JSON.parse(body);
    // secure-json-parse refuses __proto__ and constructor.prototype keys instead of letting
    // them reach an object where they could pollute prototypes.
    return sjson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    const message = (error as Error).message;
    if (/forbidden prototype property/i.test(message)) {
      throw new TrackwayError(
        'invalid_request',
        'Forbidden key in JSON body: __proto__ and constructor.prototype are not accepted',
      );
    }
    throw new TrackwayError('invalid_request', 'Malformed JSON body');
  }
}

/**
 * Fastify's trustProxy for TRACKWAY_TRUST_PROXY. A number of proxies trusts that many hops
 * from the socket inward (the same test proxy-addr applies to a hop count), and a list trusts
 * those addresses: either way the client IP is the rightmost X-Forwarded-For entry no trusted
 * proxy added. Never `true`, which would take the leftmost entry, written by the client itself.
 */
function trustedProxies(
  trust: Config['trustProxy'],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}

/** For an empty `application/json` body: an error on a route whose body is required. */
function emptyBodyError(request: FastifyRequest): TrackwayError | null {
  const schema = request.routeOptions.schema?.body as Record<string, unknown> | undefined;
  const required = schema !== undefined && schema['x-optional-body'] !== true;
  return required ? new TrackwayError('invalid_request', 'Malformed JSON body') : null;
}

/**
 * A route that takes no body refuses one that says something, by the unknown-field rule
 * (nothing the caller sends is silently ignored): `{"secret": "…"}` sent to rotate-secret is
 * `Unknown field: secret`, not a 200 that kept the caller's secret out of sight. An empty body
 * or `{}` is no body. (Non-JSON is refused by the parser; JSON that is not an object by the
 * validator: decisions.md.)
 */
const refuseBody = compileValidator(NoBodySchema);
function refuseUnexpectedBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: (error?: Error) => void,
) {
  if (request.body === undefined) return done();
  try {
    refuseBody(request.body);
    done();
  } catch (error) {
    done(error as Error);
  }
}

/** The headers on every response: set by the onSend hook, and for the router's own errors. */
function setStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.headers({
    'x-request-id': request.id,
    // Harmless for JSON, and they keep the docs page from being framed or sniffed.
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  // Account data must never sit in a shared cache (the snippet, public, says so itself).
  if (request.url.startsWith('/v1/') && !reply.hasHeader('cache-control')) {
    reply.header('cache-control', 'no-store');
  }
}

export async function buildApp(given: AppDeps): Promise<App> {
  const metrics = given.metrics ?? createMetrics({ logger: given.logger });
  // Depth and age come from the store, so every instance reports the shared queue: alert on
  // max(), not sum().
  metrics.watchBacklog(
    'webhook',
    () => given.store.webhooks.backlog(),
    () => given.clock.now(),
  );
  metrics.watchForwarding(
    () => given.store.forwarding.backlog(),
    () => given.clock.now(),
  );
  given.commits?.onEventsStored(({ stored, deduplicated }) => {
    if (stored > 0) metrics.eventsTracked.inc({ result: 'stored' }, stored);
    if (deduplicated > 0) metrics.eventsTracked.inc({ result: 'deduplicated' }, deduplicated);
  });
  // Every tracked event checks its pixel: that check reuses lookups for up to 1 s
  // (pixel-cache.ts), forgotten as soon as this process commits a change to the pixel; every
  // read of a pixel goes to the store.
  const deps: AppDeps = {
    ...given,
    metrics,
    pixelForTracking: pixelForTracking(given.store.pixels, given.clock, given.commits),
  };
  const app = Fastify({
    loggerInstance: deps.logger,
    // No per-request logs at info and above: they halve throughput. Errors and slow requests
    // are logged; at debug or trace (an operator chasing a problem) every request is too.
    logController: new LogController({
      disableRequestLogging: !['debug', 'trace'].includes(deps.logger.level),
    }),
    // Each request's child logger is made only if the request logs something (lazy-logger.ts).
    childLoggerFactory: (logger, bindings, options) =>
      new LazyChildLogger(logger, bindings, options),
    bodyLimit: MAX_BODY_BYTES,
    trustProxy: trustedProxies(deps.config.trustProxy),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Slow clients cannot hold a connection open: the headers must arrive within 10 s and
    // the whole request within 30 s, checked every second (Node checks every 30 s by default,
    // which would let a slowloris connection live up to a minute).
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    http: { headersTimeout: 10_000, connectionsCheckingInterval: 1_000 },
    clientErrorHandler: handleClientError,
    return503OnClosing: true,
    routerOptions: ROUTER_OPTIONS,
    // The router's own refusals (a path that is not valid percent-encoded UTF-8) in the
    // product's error shape, with the usual headers, instead of Fastify's default body. They
    // are answered before any route or hook, so the headers are set here.
    frameworkErrors: (error, request, reply) => {
      setStandardHeaders(request, reply);
      return handleError(error, request, reply);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Declared up front so every request object has the same shape from birth: a property
  // added later in a hook changes the object's hidden class and slows Fastify's hot path.
  app.decorateRequest('account', null as unknown as Account);
  app.decorateRequest('apiKey', null);

  app.setValidatorCompiler(compileSchemaValidator);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // An empty body sent as JSON is not JSON (contract §3) where the route needs a body; where
    // the body is optional or none is taken, it is simply no body (decisions.md).
    if (body === '') return done(emptyBodyError(request), undefined);
    try {
      done(null, parseJson(body as string, request.routeOptions.config.envelopeDepth ?? 0));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // gzip bodies are decoded before the JSON parser, under the route's size limit.
  // Callback-style hooks here and below: every request passes through them, and an async hook
  // costs a promise and a microtask each time.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    try {
      done(null, decodeBody(request, payload));
    } catch (error) {
      done(error as Error);
    }
  });

  app.setErrorHandler(handleError);
  // Every route, as it is declared, so a wrong method on a known path is told which it has.
  const routeMethods = new RouteMethods(ROUTER_OPTIONS);
  app.addHook('onRoute', (route) => routeMethods.add(route.method, route.url));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = routeMethods.allowed(request.url);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      const { status, body } = errorBody(
        new TrackwayError(
          'method_not_allowed',
          `Method not allowed: ${request.method} ${path} (allowed: ${allowed.join(', ')})`,
        ),
      );
      return reply.code(status).send(body);
    }
    return reply.code(404).send({
      error: 'Not found',
      message: `Route not found: ${request.method} ${path}`,
    });
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    setStandardHeaders(request, reply);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    // Route templates only (never the raw URL, which carries ids), so label sets stay small.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    if (reply.statusCode === 429) {
      const scope =
        route === '/v1/collect' && !request.account
          ? 'collect_ip'
          : request.account
            ? 'account'
            : 'failed_auth';
      metrics.rateLimited.inc({ scope });
    }
    if (reply.elapsedTime > SLOW_REQUEST_MS) {
      request.log.warn(
        {
          method: request.method,
          route: request.routeOptions.url,
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'slow request',
      );
    }
    done();
  });

  await app.register(swagger, {
    openapi: OPENAPI_BASE,
    transformObject: (documents) =>
      'openapiObject' in documents
        ? finishOpenApiDocument(documents.openapiObject as Record<string, unknown>)
        : documents.swaggerObject,
  });
  // The API reference (Redoc, served from node_modules: docs/decisions.md). Its examples
  // name the server showing the page, wherever it runs; the document's own `servers` entry
  // names the local default, for generators and readers.
  registerDocsPage(app, (request) => ({
    ...(app.swagger() as unknown as Record<string, unknown>),
    servers: [{ url: `${request.protocol}://${request.host}`, description: 'This server' }],
  }));

  registerHealthRoutes(app, deps);
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    // One of several processes: every process's metrics, aggregated by the primary.
    return deps.metricsText ? deps.metricsText() : metrics.registry.metrics();
  });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Key lookups are reused for at most 1 s (the contract's bound for plan changes).
  const keys = new ApiKeyCache(deps.store.accounts, deps.clock);
  // Each presented key's checksum and hash, remembered for at most the same second (auth.ts).
  const keyHashes = new KeyHashes(deps.clock);
  const keyUsage = new KeyUsage(deps.store.keys, deps.clock, (error) =>
    app.log.warn({ err: error }, 'could not record a key use'),
  );
  // Live-tail streams would hold the server open: they end when it starts closing.
  const streams = new OpenStreams({
    store: deps.store,
    clock: deps.clock,
    ...(deps.streamSlots && { slots: deps.streamSlots }),
    onError: (error, message) => app.log.warn({ err: error }, message),
  });
  // While draining, connections are closed as soon as they fall idle (as Go's Shutdown does).
  // server.close() closes those idle at that moment only: a keep-alive connection whose request
  // was in flight stayed open after its answer until keepAliveTimeout (72 s), and held the
  // drain, and the process, that long.
  let reapIdle: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    streams.endAll();
    keyHashes.clear();
    reapIdle = setInterval(() => app.server.closeIdleConnections(), IDLE_REAP_MS);
    reapIdle.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(reapIdle);
    done();
  });
  await app.register(async (v1) => {
    // A route that declares no query parameters refuses any (decisions.md: nothing the caller
    // sends is silently ignored), as the routes that declare some refuse the others.
    v1.addHook('onRoute', (route) => {
      if (route.schema?.querystring === undefined) {
        route.schema = { ...route.schema, querystring: NoQuerySchema };
      }
      // GET and HEAD bodies are never read (Fastify skips them; they carry no meaning in HTTP).
      const methods = ([] as string[]).concat(route.method);
      if (route.schema?.body === undefined && !methods.some((m) => m === 'GET' || m === 'HEAD')) {
        route.preValidation = [
          ...([] as unknown[]).concat(route.preValidation ?? []),
          refuseUnexpectedBody,
        ] as typeof route.preValidation;
      }
    });
    const limiter = deps.rateLimiter;
    v1.addHook('onRequest', async (request, reply) => {
      const now = deps.clock.now();
      try {
        const key = await authenticateRequest(keys, keyHashes, request.headers.authorization);
        request.account = key.account;
        request.apiKey = { id: key.keyId, scope: key.scope };
        keyUsage.record(key.keyId);
        // Before the limits, like authentication's other 403s: a refused call costs no quota.
        assertScopeAllows(key.scope, `${request.method} ${request.routeOptions.url}`);
      } catch (error) {
        if (limiter && error instanceof TrackwayError && error.code === 'unauthorized') {
          throw await limitAuthFailure(limiter, request.ip, now, error);
        }
        throw error;
      }
      // After authentication (and its 403s): only a live, entitled account has quotas.
      if (limiter) await limitAccount(limiter, request.account, now, reply);
    });
    registerTrack(v1, deps);
    registerTrackBatch(v1, deps);
    registerValidateTrack(v1, deps);
    registerListPixels(v1, deps);
    registerCreatePixel(v1, deps);
    registerGetPixel(v1, deps);
    registerUpdatePixel(v1, deps);
    registerRotatePublishableKey(v1, deps);
    registerListEvents(v1, deps);
    registerCreateWebhook(v1, deps);
    registerListWebhooks(v1, deps);
    registerGetWebhook(v1, deps);
    registerUpdateWebhook(v1, deps);
    registerDeleteWebhook(v1, deps);
    registerRotateWebhookSecret(v1, deps);
    registerListDeliveries(v1, deps);
    registerRetryDelivery(v1, deps);
    registerTestWebhook(v1, deps);
    registerListKeys(v1, deps);
    registerCreateKey(v1, deps);
    registerRevokeKey(v1, deps);
    registerGetStats(v1, deps);
    registerStreamEvents(v1, deps, streams);
    registerErasure(v1, deps);
    registerExportEvents(v1, deps);
    registerCreateDestination(v1, deps);
    registerListDestinations(v1, deps);
    registerGetDestination(v1, deps);
    registerUpdateDestination(v1, deps);
    registerDeleteDestination(v1, deps);
    registerReplayDestination(v1, deps);
    registerTestDestination(v1, deps);
    registerGetEvent(v1, deps);
  });

  // The browser routes take no API key (a publishable key, or nothing): outside the scope
  // above, they answer CORS themselves.
  await app.register(async (browser) => {
    // `navigator.sendBeacon` can only send text/plain (a "simple" type, so no preflight
    // either): the same JSON, under the route's own size limit.
    browser.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, body === '' ? undefined : parseJson(body as string, 0));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    registerCollect(browser, deps);
    registerCollectPreflight(browser, deps);
    registerPixelScript(browser);
  });

  await registerDashboard(app, deps, keys, streams);

  return app;
}
