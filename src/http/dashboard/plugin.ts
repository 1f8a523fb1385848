/**
 * The web dashboard at /dashboard (contract §13): server-rendered pages over the same domain
 * verbs as the API, signed in with a session cookie instead of a bearer key. Same process, no
 * build step: the pages are HTML strings, the charts are Chart.js served from node_modules.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { assertApiAccess, authenticateKey } from '../../domain/accounts/accounts.ts';
import { RateLimitedError, TrackwayError } from '../../domain/errors.ts';
import type { AccountStore } from '../../domain/ports/account-store.ts';
import type { App, AppDeps } from '../deps.ts';
import { errorBody, toTrackwayError } from '../errors.ts';
import { limitAccount, limitAuthFailure } from '../rate-limit.ts';
import { webhookContextOf } from '../route-kit.ts';
import { platformGatewayOf } from '../routes/destinations.test-send.ts';
import { DEFAULT_HEARTBEAT_MS, type OpenStreams, streamEvents } from '../sse.ts';
import { type Html, html } from './html.ts';
import { type Form, one, Screens } from './kit.ts';
import { barePage } from './layout.ts';
import type { Usage } from './pages/overview.ts';
import { signInPage } from './pages/sign-in.ts';
import { registerScreens } from './routes.ts';
import {
  assertSameOrigin,
  endSession,
  findSession,
  sessionTokenHash,
  startSession,
} from './session.ts';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

interface Asset {
  body: Buffer;
  type: string;
  /** A hash of the body: the browser revalidates with it and gets a 304 while it holds. */
  etag: string;
}

const asset = (path: string, type: string): Asset => {
  const body = readFileSync(path);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, type, etag };
};

/** The only files served under /dashboard/assets/, read once at start. */
function loadAssets(): Map<string, Asset> {
  const chartJs = join(dirname(require.resolve('chart.js')), 'chart.umd.min.js');
  return new Map([
    ['dashboard.css', asset(join(here, 'assets/dashboard.css'), 'text/css')],
    ['dashboard.js', asset(join(here, 'assets/dashboard.js'), 'text/javascript')],
    ['chart.umd.min.js', asset(chartJs, 'text/javascript')],
  ]);
}

/** Own scripts and styles only; no inline script can run, nothing may frame the pages. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

function parseForm(body: string): Form {
  const form: Form = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const prior = form[key];
    form[key] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  }
  return form;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session's key, set by the dashboard's session hook. */
    dashboardKeyId: string | null;
  }
}

export async function registerDashboard(
  app: App,
  deps: AppDeps,
  keys: Pick<AccountStore, 'findByKeyHash'>,
  streams: OpenStreams,
): Promise<void> {
  const assets = loadAssets();
  const limiter = deps.rateLimiter;
  app.decorateRequest('dashboardKeyId', null);

  await app.register(async (d) => {
    d.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, parseForm(body as string)),
    );
    d.addHook('onSend', (request, reply, payload, done) => {
      if (request.url.startsWith('/dashboard/assets/')) {
        // Kept, but checked on every use: an upgrade changes the files under the same names.
        // Chart.js is ~200 KB, fetched and compiled again on every page while it was
        // `no-store`; revalidated, it is a 304 and the browser's compiled copy is reused.
        reply.header('cache-control', 'no-cache');
      } else {
        reply.header('cache-control', 'no-store');
        reply.header('content-security-policy', CSP);
      }
      done(null, payload);
    });

    const sendPage = (reply: FastifyReply, markup: Html, status = 200) =>
      reply.code(status).type('text/html; charset=utf-8').send(markup.value);

    d.setErrorHandler((error, request, reply) => {
      if (error instanceof RateLimitedError) {
        reply.header('retry-after', String(error.retryAfter));
        return sendPage(
          reply,
          barePage(
            'Too many requests',
            html`<p>${error.message} Retry in ${error.retryAfter} s.</p>`,
          ),
          429,
        );
      }
      // Fastify's own refusals (a body of no or another content type, malformed, too large)
      // are the sender's fault (415 / 400 / 413, as the API answers them); the API's one
      // catalogue decides every status, so a storage outage is a 503 here too, never a 500.
      const refused = toTrackwayError(error);
      if (refused.code !== 'internal') {
        const { status } = errorBody(refused);
        const message =
          refused.code === 'unsupported_media_type'
            ? 'Forms are sent as application/x-www-form-urlencoded'
            : refused.message;
        if (status >= 500) request.log.warn({ err: error }, 'dashboard request unavailable');
        return sendPage(
          reply,
          barePage(
            status === 404
              ? 'Not found'
              : status >= 500
                ? 'Temporarily unavailable'
                : 'Request refused',
            html`<p>${message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`,
          ),
          status,
        );
      }
      request.log.error({ err: error }, 'dashboard request failed');
      return sendPage(reply, barePage('Something went wrong', html`<p>Please try again.</p>`), 500);
    });

    d.get<{ Params: { file: string } }>(
      '/dashboard/assets/:file',
      { schema: { hide: true } },
      async (request, reply) => {
        const file = assets.get(request.params.file);
        if (!file) throw new TrackwayError('not_found', 'No such file');
        reply.header('etag', file.etag);
        if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
        return reply.type(file.type).send(file.body);
      },
    );

    d.get('/dashboard/sign-in', { schema: { hide: true } }, async (_request, reply) =>
      sendPage(reply, signInPage()),
    );

    d.post<{ Body: Form }>(
      '/dashboard/sign-in',
      { schema: { hide: true } },
      async (request, reply) => {
        assertSameOrigin(request);
        const now = deps.clock.now();
        try {
          const key = await authenticateKey(keys, one(request.body ?? {}, 'api_key')?.trim());
          if (key.scope !== 'full') {
            return sendPage(
              reply,
              signInPage('An ingest key can only send events; sign in with a full-access key.'),
              403,
            );
          }
          await startSession(deps.store.sessions, deps.clock, request, reply, {
            accountId: key.account.id,
            keyId: key.keyId,
          });
          return reply.redirect('/dashboard', 303);
        } catch (error) {
          if (!(error instanceof TrackwayError)) throw error;
          if (error.code === 'unauthorized' && limiter) {
            const limited = await limitAuthFailure(limiter, request.ip, now, error);
            if (limited instanceof RateLimitedError) throw limited;
          }
          if (error.code === 'unauthorized' || error.code === 'forbidden') {
            return sendPage(
              reply,
              signInPage(error.message),
              error.code === 'forbidden' ? 403 : 401,
            );
          }
          throw error;
        }
      },
    );

    d.post('/dashboard/sign-out', { schema: { hide: true } }, async (request, reply) => {
      assertSameOrigin(request);
      await endSession(deps.store.sessions, request, reply);
      return reply.redirect('/dashboard/sign-in', 303);
    });

    // Everything else needs a session, and counts against the account's limits like the API.
    await d.register(async (s) => {
      s.addHook('onRequest', async (request, reply) => {
        const session = await findSession(deps.store.sessions, deps.clock, request);
        const account = session ? await deps.store.accounts.getAccount(session.accountId) : null;
        if (!session || !account) {
          if (request.method === 'GET') return reply.redirect('/dashboard/sign-in', 303);
          throw new TrackwayError('forbidden', 'Your session has ended; sign in again.');
        }
        assertApiAccess(account);
        request.account = account;
        request.dashboardKeyId = session.keyId;
        if (request.method !== 'GET' && request.method !== 'HEAD') assertSameOrigin(request);
        if (limiter) await limitAccount(limiter, account, deps.clock.now(), reply);
      });

      registerScreens(new Screens(s, deps, sendPage), usageOf, () => platformGatewayOf(deps));
      s.get<{ Params: { pixel_id: string } }>(
        '/dashboard/pixels/:pixel_id/stream',
        { schema: { hide: true } },
        async (request, reply) => {
          await streamEvents({
            ctx: webhookContextOf(deps, request),
            pixelId: request.params.pixel_id,
            request,
            reply,
            streams,
            credential: { kind: 'session', tokenHash: sessionTokenHash(request) ?? '' },
            heartbeatMs: deps.liveTailHeartbeatMs ?? DEFAULT_HEARTBEAT_MS,
          });
        },
      );
    });
  });
}

/** Usage this minute and today, from the rate-limit headers this very request was given. */
function usageOf(reply: FastifyReply): Usage | null {
  const policy = reply.getHeader('ratelimit-policy');
  const state = reply.getHeader('ratelimit');
  if (typeof policy !== 'string' || typeof state !== 'string') return null;
  const quota = (w: string) => Number(new RegExp(`"${w}";q=(\\d+)`).exec(policy)?.[1] ?? 0);
  const left = (w: string) => Number(new RegExp(`"${w}";r=(\\d+)`).exec(state)?.[1] ?? 0);
  return {
    minute: { used: quota('minute') - left('minute'), limit: quota('minute') },
    day: { used: quota('day') - left('day'), limit: quota('day') },
  };
}
