// An EXPERIMENT (issue 21), not the product: what POST /v1/track costs when a bare node:http
// server answers it instead of Fastify, with everything else the same. It starts like
// `trackway serve` (src/main.ts: the store opened and migrated, the delivery and forwarding
// workers, the purge job and the match-keys sweep, the rate limiter from the config, the
// metrics) and runs the compiled product code in dist/ for every step of the route:
//
//   authentication  authenticateRequest with its own KeyHashes and ApiKeyCache (auth.ts,
//                   key-cache.ts), KeyUsage, assertScopeAllows, in the onRequest hook's order
//   rate limits     limitAccount on the configured limiter, its headers included (rate-limit.ts)
//   body            Content-Type and size checks as Fastify makes them, decodeBody (gzip),
//                   parseJson (app.ts), the route's no-query-parameters rule (route-kit.ts)
//   the verb        trackEvent with the tracking pixel cache (validation, hashing, pixel check,
//                   group-committed insert answered after its durable flush)
//   the answer      the same JSON body and headers (request id, security headers,
//                   cache-control, rate-limit headers), the request-duration metric
//
// written with res.writeHead(status, headers) + res.end(json): no hooks, no reply object, no
// serializer. Every other request (creating the bench's pixel, counting its events) goes to
// the product's own Fastify app through app.routing(req, res), so the fast path is the only
// difference. Errors on the fast path are answered in the product's shape (errorBody) but
// without everything handleError does (client aborts, storage-outage logging); the bench
// sends only valid requests. Not handled on the fast path: TRACKWAY_TRUST_PROXY (the client IP
// of a failed authentication is the socket's) and Content-Length mismatches.
//
// Run with the service's environment (DATABASE_URL …); prints "Trackway is listening on URL".
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../dist/config.js';
import { createPlatformGateway } from '../dist/delivery/platform-sender.js';
import { ApiKeyCache } from '../dist/domain/accounts/key-cache.js';
import { CommitSignal } from '../dist/domain/commits.js';
import { TrackwayError } from '../dist/domain/errors.js';
import { trackEvent } from '../dist/domain/events/track-event.js';
import { KeyUsage } from '../dist/domain/keys/key-usage.js';
import { assertScopeAllows } from '../dist/domain/keys/keys.js';
import { startMatchKeysSweep } from '../dist/domain/lifecycle/match-keys-sweep.js';
import { startPurgeJob } from '../dist/domain/lifecycle/retention.js';
import { withPixelCache } from '../dist/domain/pixels/pixel-cache.js';
import { systemClock } from '../dist/domain/ports/clock.js';
import { compileValidator } from '../dist/domain/validation.js';
import { buildApp, parseJson } from '../dist/http/app.js';
import { authenticateRequest, KeyHashes } from '../dist/http/auth.js';
import { decodeBody } from '../dist/http/content-encoding.js';
import { errorBody, MAX_BODY_BYTES, toTrackwayError } from '../dist/http/errors.js';
import { createMetrics } from '../dist/http/metrics.js';
import { limitAccount, limitAuthFailure } from '../dist/http/rate-limit.js';
import { NoQuerySchema } from '../dist/http/route-kit.js';
import { createLogger } from '../dist/logger.js';
import { createRateLimiter, startWorker } from '../dist/main.js';
import { openStore } from '../dist/storage/index.js';

const ROUTE = '/v1/track';
const SLOW_REQUEST_MS = 1_000;

const config = loadConfig();
const logger = createLogger(config.logLevel);
const opened = [];
const commits = new CommitSignal();
const rawStore = await openStore(config.database, { poolSize: config.databasePoolSize, commits });
opened.push(() => rawStore.close());
await rawStore.migrate();
const metrics = createMetrics({ logger });
if (config.worker) {
  const worker = startWorker(config, rawStore, logger, { metrics, commits });
  opened.push(() => worker.stop());
}
opened.push(startPurgeJob({ store: rawStore, clock: systemClock }, { purged() {}, failed() {} }));
opened.push(
  startMatchKeysSweep({ store: rawStore, clock: systemClock }, { erased() {}, failed() {} }),
);
const limiter = await createRateLimiter(config, logger, metrics);
if (limiter) opened.push(() => limiter.close());
const platforms = createPlatformGateway(config.platformUrls);
opened.push(() => platforms.close());

// The pixel cache wraps the store handed to the Fastify app too, so a pixel paused through the
// API forgets this path's entry at once, as it does in the service.
const { store, pixelForTracking } = withPixelCache(rawStore, systemClock);
const app = await buildApp({
  platforms,
  metrics,
  store,
  clock: systemClock,
  config,
  logger,
  rateLimiter: limiter,
  commits,
});
opened.push(() => app.close());
await app.ready();

// The fast path's own instances of what buildApp keeps for its hook (same classes, same TTLs).
const keys = new ApiKeyCache(store.accounts, systemClock);
const keyHashes = new KeyHashes(systemClock);
const keyUsage = new KeyUsage(store.keys, systemClock, (error) =>
  logger.warn({ err: error }, 'could not record a key use'),
);
const validateQuery = compileValidator(NoQuerySchema, { noun: 'parameter', coerce: true });
const decodeOptions = { routeOptions: { bodyLimit: MAX_BODY_BYTES } };

/** What limitAccount writes its headers into, in place of a Fastify reply. */
class HeaderSink {
  constructor(headers) {
    this.target = headers;
  }
  headers(values) {
    Object.assign(this.target, values);
    return this;
  }
}

function respond(res, status, headers, json, started) {
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = Buffer.byteLength(json);
  res.writeHead(status, headers);
  res.end(json);
  const ms = performance.now() - started;
  metrics.httpRequests.observe({ method: 'POST', route: ROUTE, status: String(status) }, ms / 1000);
  // app.ts's onResponse hook: slow requests are logged, nothing else is.
  if (ms > SLOW_REQUEST_MS) {
    logger.warn({ method: 'POST', route: ROUTE, status, ms: Math.round(ms) }, 'slow request');
  }
}

function fail(res, headers, error, started, account) {
  const mapped = toTrackwayError(error);
  if (mapped.code === 'internal') logger.error({ err: error }, 'unhandled error');
  const { status, body } = errorBody(mapped);
  if (body.retry_after !== undefined) headers['retry-after'] = body.retry_after;
  if (status === 429) metrics.rateLimited.inc({ scope: account ? 'account' : 'failed_auth' });
  respond(res, status, headers, JSON.stringify(body), started);
}

/** The body as a string, under the route's limit (Fastify's rawBody rules, in short). */
function readBody(req) {
  return new Promise((resolve, reject) => {
    const type = req.headers['content-type'];
    if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) {
      req.resume();
      reject(new TrackwayError('unsupported_media_type', 'Content-Type must be application/json'));
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (declared > MAX_BODY_BYTES) {
      req.resume();
      reject(
        new TrackwayError('payload_too_large', `Request body exceeds ${MAX_BODY_BYTES} bytes`),
      );
      return;
    }
    const stream = decodeBody({ headers: req.headers, ...decodeOptions }, req);
    const chunks = [];
    let length = 0;
    stream.on('data', (chunk) => {
      length += chunk.length;
      if (length > MAX_BODY_BYTES) {
        stream.destroy(
          new TrackwayError('payload_too_large', `Request body exceeds ${MAX_BODY_BYTES} bytes`),
        );
        return;
      }
      chunks.push(chunk);
    });
    stream.on('error', reject);
    stream.on('end', () =>
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString()),
    );
  });
}

async function track(req, res, query) {
  const started = performance.now();
  const headers = {
    'x-request-id': randomUUID(),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
  let account = null;
  try {
    // The onRequest hook of app.ts, step by step.
    const now = systemClock.now();
    let key;
    try {
      key = await authenticateRequest(keys, keyHashes, req.headers.authorization);
      account = key.account;
      keyUsage.record(key.keyId);
      assertScopeAllows(key.scope, `POST ${ROUTE}`);
    } catch (error) {
      if (limiter && error instanceof TrackwayError && error.code === 'unauthorized') {
        throw await limitAuthFailure(limiter, req.socket.remoteAddress ?? '', now, error);
      }
      throw error;
    }
    if (limiter) await limitAccount(limiter, account, now, new HeaderSink(headers));
    const text = await readBody(req);
    if (text === '') throw new TrackwayError('invalid_request', 'Malformed JSON body');
    const body = parseJson(text, 0);
    validateQuery(query === undefined ? {} : Object.fromEntries(new URLSearchParams(query)));
    const ctx = { store, clock: systemClock, account, pixelForTracking };
    const answer = await trackEvent({ ctx, input: body });
    respond(res, 200, headers, JSON.stringify(answer), started);
  } catch (error) {
    fail(res, headers, error, started, account);
  }
}

const server = createServer(
  {
    // Fastify's settings in app.ts: slow clients cannot hold a connection open.
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    connectionsCheckingInterval: 1_000,
    keepAliveTimeout: 72_000,
  },
  (req, res) => {
    const url = req.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    if (req.method === 'POST' && (path === ROUTE || path === `${ROUTE}/`)) {
      track(req, res, mark === -1 ? undefined : url.slice(mark + 1));
    } else {
      app.routing(req, res);
    }
  },
);
server.setTimeout(60_000);
server.listen(config.port, config.host, () => {
  const { address, port } = server.address();
  process.stdout.write(`Trackway is listening on http://${address}:${port}\n`);
});

async function close() {
  await new Promise((resolve) => {
    server.close(resolve);
    server.closeIdleConnections();
  });
  for (const closeOne of opened.splice(0).reverse()) await closeOne().catch(() => {});
}
process.once('SIGTERM', () => close().then(() => process.exit(0)));
process.once('SIGINT', () => close().then(() => process.exit(0)));
