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
import type { FastifyReply, FastifyRequest } from 'fastify';
import { assertApiAccess, authenticateKey } from '../../domain/accounts/accounts.ts';
import { RateLimitedError, TrackwayError } from '../../domain/errors.ts';
import { createKey, revokeKey } from '../../domain/keys/keys.ts';
import { CreateKeySchema } from '../../domain/keys/schemas.ts';
import type { Account } from '../../domain/model.ts';
import { createPixel, updatePixel } from '../../domain/pixels/pixels.ts';
import { CreatePixelSchema, UpdatePixelSchema } from '../../domain/pixels/schemas.ts';
import type { AccountStore } from '../../domain/ports.ts';
import { compileValidator } from '../../domain/validation.ts';
import {
  createWebhook,
  deleteWebhook,
  retryDelivery,
  rotateWebhookSecret,
  sendTestWebhook,
  updateWebhook,
  type WebhookContext,
} from '../../domain/webhooks/endpoints.ts';
import {
  CreateWebhookSchema,
  TestWebhookSchema,
  UpdateWebhookSchema,
} from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { limitAccount, limitAuthFailure } from '../rate-limit.ts';
import { webhookDestinations } from '../route-kit.ts';
import { DEFAULT_HEARTBEAT_MS, type OpenStreams, streamEvents } from '../sse.ts';
import { type Html, html } from './html.ts';
import { barePage, type Flash, page, type Section } from './layout.ts';
import { eventsBody } from './pages/events.ts';
import { keysBody } from './pages/keys.ts';
import { overviewBody, type Usage } from './pages/overview.ts';
import { pixelEditBody, pixelsBody } from './pages/pixels.ts';
import { signInPage } from './pages/sign-in.ts';
import { tailBody } from './pages/tail.ts';
import { webhookBody, webhooksBody } from './pages/webhooks.ts';
import { assertSameOrigin, endSession, findSession, startSession } from './session.ts';

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

/** Fixed notices after a redirect: the query names one, so no text can be injected. */
const NOTICES: Record<string, string> = {
  'pixel-created': 'Pixel created.',
  'pixel-saved': 'Pixel saved.',
  'pixel-paused': 'Pixel paused: its events are refused until it is resumed.',
  'pixel-active': 'Pixel resumed.',
  'key-revoked': 'Key revoked.',
  'test-sent': 'Test message queued.',
  retried: 'Delivery queued again.',
  'webhook-saved': 'Endpoint saved.',
  'webhook-deleted': 'Endpoint deleted.',
};

type Form = Record<string, string | string[]>;

function parseForm(body: string): Form {
  const form: Form = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const prior = form[key];
    form[key] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  }
  return form;
}

const one = (form: Form, key: string): string | undefined => {
  const value = form[key];
  return Array.isArray(value) ? value[0] : value;
};

/** The form's non-empty fields (what the API would receive), validated by the API's schema. */
function input<T>(validate: (value: unknown) => T, form: Form, fields: string[]): T {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const value = one(form, field)?.trim();
    if (value !== undefined && value !== '') body[field] = value;
  }
  return validate(body);
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
  const validCreatePixel = compileValidator(CreatePixelSchema);
  const validUpdatePixel = compileValidator(UpdatePixelSchema);
  const validCreateKey = compileValidator(CreateKeySchema);
  const validCreateWebhook = compileValidator(CreateWebhookSchema);
  const validUpdateWebhook = compileValidator(UpdateWebhookSchema);
  const validTestWebhook = compileValidator(TestWebhookSchema);
  app.decorateRequest('dashboardKeyId', null);

  const contextOf = (account: Account): WebhookContext => ({
    store: deps.store,
    clock: deps.clock,
    account,
    destinations: webhookDestinations(deps),
  });

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
      if (error instanceof TrackwayError) {
        const status = { not_found: 404, forbidden: 403, invalid_request: 400, conflict: 409 }[
          error.code as string
        ];
        if (status) {
          return sendPage(
            reply,
            barePage(
              status === 404 ? 'Not found' : 'Request refused',
              html`<p>${error.message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`,
            ),
            status,
          );
        }
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

      const show = (
        reply: FastifyReply,
        request: FastifyRequest,
        section: Section,
        title: string,
        body: Html,
        flash: Flash = {},
        status = 200,
      ) => sendPage(reply, page({ title, section, account: request.account, body, flash }), status);

      const noticeOf = (request: FastifyRequest): Flash => {
        const done = (request.query as Record<string, string>)['done'];
        return { notice: done === undefined ? undefined : NOTICES[done] };
      };

      /**
       * Runs a form's action: on success, where to go next; a refusal (bad input, 404, 409)
       * renders the page again with the message instead.
       */
      const act = async (
        reply: FastifyReply,
        action: () => Promise<string>,
        onRefusal: (message: string) => Promise<unknown>,
      ) => {
        try {
          return reply.redirect(await action(), 303);
        } catch (error) {
          if (
            error instanceof TrackwayError &&
            error.code !== 'internal' &&
            error.code !== 'service_unavailable' &&
            error.code !== 'rate_limited'
          ) {
            return onRefusal(error.message);
          }
          throw error;
        }
      };

      s.get<{ Querystring: { pixel_id?: string; period?: string } }>(
        '/dashboard',
        { schema: { hide: true } },
        async (request, reply) =>
          show(
            reply,
            request,
            '/dashboard',
            'Overview',
            await overviewBody(contextOf(request.account), request.query, usageOf(reply)),
          ),
      );

      // Pixels
      const pixelsPage = async (
        request: FastifyRequest,
        reply: FastifyReply,
        flash: Flash,
        status = 200,
        form: Record<string, string> = {},
      ) =>
        show(
          reply,
          request,
          '/dashboard/pixels',
          'Pixels',
          await pixelsBody(contextOf(request.account), form),
          flash,
          status,
        );
      s.get('/dashboard/pixels', { schema: { hide: true } }, async (request, reply) =>
        pixelsPage(request, reply, noticeOf(request)),
      );
      s.post<{ Body: Form }>(
        '/dashboard/pixels',
        { schema: { hide: true } },
        async (request, reply) =>
          act(
            reply,
            async () => {
              const body = input(validCreatePixel, request.body, [
                'name',
                'domain',
                'tracking_domain',
              ]);
              await createPixel({ ctx: contextOf(request.account), input: body });
              return '/dashboard/pixels?done=pixel-created';
            },
            (message) =>
              pixelsPage(request, reply, { error: message }, 400, {
                name: one(request.body, 'name') ?? '',
                domain: one(request.body, 'domain') ?? '',
                tracking_domain: one(request.body, 'tracking_domain') ?? '',
              }),
          ),
      );
      s.get<{ Params: { pixel_id: string } }>(
        '/dashboard/pixels/:pixel_id',
        { schema: { hide: true } },
        async (request, reply) =>
          show(
            reply,
            request,
            '/dashboard/pixels',
            'Edit pixel',
            await pixelEditBody(contextOf(request.account), request.params.pixel_id),
            noticeOf(request),
          ),
      );
      s.post<{ Params: { pixel_id: string }; Body: Form }>(
        '/dashboard/pixels/:pixel_id',
        { schema: { hide: true } },
        async (request, reply) =>
          act(
            reply,
            async () => {
              const body = input(validUpdatePixel, request.body, [
                'name',
                'domain',
                'tracking_domain',
                'status',
              ]);
              await updatePixel({
                ctx: contextOf(request.account),
                pixelId: request.params.pixel_id,
                input: body,
              });
              return `/dashboard/pixels/${encodeURIComponent(request.params.pixel_id)}?done=pixel-saved`;
            },
            async (message) =>
              show(
                reply,
                request,
                '/dashboard/pixels',
                'Edit pixel',
                await pixelEditBody(contextOf(request.account), request.params.pixel_id),
                { error: message },
                400,
              ),
          ),
      );
      s.post<{ Params: { pixel_id: string }; Body: Form }>(
        '/dashboard/pixels/:pixel_id/status',
        { schema: { hide: true } },
        async (request, reply) =>
          act(
            reply,
            async () => {
              const body = input(validUpdatePixel, request.body, ['status']);
              await updatePixel({
                ctx: contextOf(request.account),
                pixelId: request.params.pixel_id,
                input: body,
              });
              return `/dashboard/pixels?done=pixel-${body.status === 'paused' ? 'paused' : 'active'}`;
            },
            (message) => pixelsPage(request, reply, { error: message }, 400),
          ),
      );

      // Events
      s.get<{ Querystring: Record<string, string> }>(
        '/dashboard/events',
        { schema: { hide: true } },
        async (request, reply) => {
          const ctx = contextOf(request.account);
          try {
            return show(
              reply,
              request,
              '/dashboard/events',
              'Events',
              await eventsBody(ctx, request.query),
            );
          } catch (error) {
            if (!(error instanceof TrackwayError) || error.code !== 'invalid_request') throw error;
            // A bad filter: the explorer again without it, and the reason.
            const { pixel_id } = request.query;
            return show(
              reply,
              request,
              '/dashboard/events',
              'Events',
              await eventsBody(ctx, pixel_id ? { pixel_id } : {}),
              { error: error.message },
              400,
            );
          }
        },
      );

      // Live tail
      s.get<{ Querystring: { pixel_id?: string } }>(
        '/dashboard/tail',
        { schema: { hide: true } },
        async (request, reply) =>
          show(
            reply,
            request,
            '/dashboard/tail',
            'Live tail',
            await tailBody(contextOf(request.account), request.query),
          ),
      );
      s.get<{ Params: { pixel_id: string } }>(
        '/dashboard/pixels/:pixel_id/stream',
        { schema: { hide: true } },
        async (request, reply) => {
          await streamEvents({
            ctx: contextOf(request.account),
            pixelId: request.params.pixel_id,
            request,
            reply,
            streams,
            heartbeatMs: deps.liveTailHeartbeatMs ?? DEFAULT_HEARTBEAT_MS,
          });
        },
      );

      // Webhooks
      const webhooksPage = async (
        request: FastifyRequest,
        reply: FastifyReply,
        flash: Flash,
        status = 200,
      ) =>
        show(
          reply,
          request,
          '/dashboard/webhooks',
          'Webhooks',
          await webhooksBody(contextOf(request.account)),
          flash,
          status,
        );
      const webhookPage = async (
        request: FastifyRequest<{ Params: { webhook_id: string } }>,
        reply: FastifyReply,
        flash: Flash,
        status = 200,
        rotated?: { secret: string },
      ) =>
        show(
          reply,
          request,
          '/dashboard/webhooks',
          'Webhook endpoint',
          await webhookBody(contextOf(request.account), request.params.webhook_id, rotated),
          flash,
          status,
        );
      s.get('/dashboard/webhooks', { schema: { hide: true } }, async (request, reply) =>
        webhooksPage(request, reply, noticeOf(request)),
      );
      s.post<{ Body: Form }>(
        '/dashboard/webhooks',
        { schema: { hide: true } },
        async (request, reply) => {
          try {
            const events = request.body['events'];
            const body = validCreateWebhook({
              url: one(request.body, 'url')?.trim() ?? '',
              events: events === undefined ? [] : Array.isArray(events) ? events : [events],
              ...(one(request.body, 'description')?.trim() && {
                description: one(request.body, 'description')!.trim(),
              }),
            });
            const created = await createWebhook({ ctx: contextOf(request.account), input: body });
            // The secret is shown in this response only: no redirect, nothing stored for later.
            return show(
              reply,
              request,
              '/dashboard/webhooks',
              'Webhooks',
              await webhooksBody(contextOf(request.account), created),
              { notice: 'Endpoint created.' },
            );
          } catch (error) {
            if (error instanceof TrackwayError && error.code === 'invalid_request') {
              return webhooksPage(request, reply, { error: error.message }, 400);
            }
            throw error;
          }
        },
      );
      s.get<{ Params: { webhook_id: string } }>(
        '/dashboard/webhooks/:webhook_id',
        { schema: { hide: true } },
        async (request, reply) => webhookPage(request, reply, noticeOf(request)),
      );
      const hookUrl = (id: string, done: string) =>
        `/dashboard/webhooks/${encodeURIComponent(id)}?done=${done}`;
      s.post<{ Params: { webhook_id: string }; Body: Form }>(
        '/dashboard/webhooks/:webhook_id/test',
        { schema: { hide: true } },
        async (request, reply) =>
          act(
            reply,
            async () => {
              const body = input(validTestWebhook, request.body, ['event']);
              await sendTestWebhook({
                ctx: contextOf(request.account),
                id: request.params.webhook_id,
                input: body,
              });
              return hookUrl(request.params.webhook_id, 'test-sent');
            },
            (message) => webhookPage(request, reply, { error: message }, 400),
          ),
      );
      s.post<{ Params: { webhook_id: string } }>(
        '/dashboard/webhooks/:webhook_id/rotate-secret',
        { schema: { hide: true } },
        async (request, reply) => {
          const rotated = await rotateWebhookSecret({
            ctx: contextOf(request.account),
            id: request.params.webhook_id,
          });
          return webhookPage(
            request,
            reply,
            { notice: 'New secret made; the old one keeps signing for 24 hours.' },
            200,
            rotated,
          );
        },
      );
      s.post<{ Params: { webhook_id: string }; Body: Form }>(
        '/dashboard/webhooks/:webhook_id/enabled',
        { schema: { hide: true } },
        async (request, reply) =>
          act(
            reply,
            async () => {
              const body = validUpdateWebhook({ enabled: one(request.body, 'enabled') === 'true' });
              await updateWebhook({
                ctx: contextOf(request.account),
                id: request.params.webhook_id,
                input: body,
              });
              return hookUrl(request.params.webhook_id, 'webhook-saved');
            },
            (message) => webhookPage(request, reply, { error: message }, 400),
          ),
      );
      s.post<{ Params: { webhook_id: string } }>(
        '/dashboard/webhooks/:webhook_id/delete',
        { schema: { hide: true } },
        async (request, reply) => {
          await deleteWebhook({ ctx: contextOf(request.account), id: request.params.webhook_id });
          return reply.redirect('/dashboard/webhooks?done=webhook-deleted', 303);
        },
      );
      s.post<{ Params: { webhook_id: string; message_id: string } }>(
        '/dashboard/webhooks/:webhook_id/deliveries/:message_id/retry',
        { schema: { hide: true } },
        async (request, reply) =>
          act(
            reply,
            async () => {
              await retryDelivery({
                ctx: contextOf(request.account),
                id: request.params.webhook_id,
                messageId: request.params.message_id,
              });
              return hookUrl(request.params.webhook_id, 'retried');
            },
            (message) => webhookPage(request, reply, { error: message }, 409),
          ),
      );

      // API keys
      const keysPage = async (
        request: FastifyRequest,
        reply: FastifyReply,
        flash: Flash,
        status = 200,
        created?: { name: string; key: string },
      ) =>
        show(
          reply,
          request,
          '/dashboard/keys',
          'API keys',
          await keysBody(contextOf(request.account), request.dashboardKeyId ?? '', created),
          flash,
          status,
        );
      s.get('/dashboard/keys', { schema: { hide: true } }, async (request, reply) =>
        keysPage(request, reply, noticeOf(request)),
      );
      s.post<{ Body: Form }>(
        '/dashboard/keys',
        { schema: { hide: true } },
        async (request, reply) => {
          try {
            const body = input(validCreateKey, request.body, ['name', 'scope']);
            const created = await createKey({ ctx: contextOf(request.account), input: body });
            // Shown in this response only: no redirect, nothing stored for later.
            return keysPage(request, reply, { notice: 'Key created.' }, 201, created);
          } catch (error) {
            if (error instanceof TrackwayError && error.code === 'invalid_request') {
              return keysPage(request, reply, { error: error.message }, 400);
            }
            throw error;
          }
        },
      );
      s.post<{ Params: { key_id: string } }>(
        '/dashboard/keys/:key_id/revoke',
        { schema: { hide: true } },
        async (request, reply) => {
          await revokeKey({ ctx: contextOf(request.account), keyId: request.params.key_id });
          // Revoking the session's own key ends the session (findSession joins the key).
          return reply.redirect('/dashboard/keys?done=key-revoked', 303);
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
