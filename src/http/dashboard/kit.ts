/**
 * How the signed-in dashboard declares its pages and forms: a page is a function from the
 * request to a `Screen`; a form action either redirects (POST/redirect/GET, so a reload never
 * repeats it) or renders a screen (when it shows something only this once, like a new key), and
 * a refusal (bad input, 404, 409) renders a screen again with the message.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TrackwayError } from '../../domain/errors.ts';
import type { WebhookContext } from '../../domain/webhooks/endpoints.ts';
import type { App, AppDeps } from '../deps.ts';
import { webhookContextOf } from '../route-kit.ts';
import { type Html, html } from './html.ts';
import { type Flash, NAV, page, type Section } from './layout.ts';

export interface Screen {
  section: Section;
  title: string;
  body: Html;
  flash?: Flash;
  status?: number;
}

export type Form = Record<string, string | string[]>;

/** What a route sees: the request as Fastify typed it and the account's domain context. */
export type Request<P> = FastifyRequest<{
  Params: P;
  Body: Form;
  Querystring: Record<string, string>;
}>;

/** Fixed notices after a redirect: the query names one, so no text can be injected. */
const NOTICES: Record<string, string> = {
  'pixel-created': 'Pixel created.',
  'pixel-saved': 'Pixel saved.',
  'publishable-key-rotated':
    'New publishable key: update the snippet; the old key works for 24 hours.',
  'pixel-paused': 'Pixel paused: its events are refused until it is resumed.',
  'pixel-active': 'Pixel resumed.',
  'key-revoked': 'Key revoked.',
  'test-sent': 'Test message queued.',
  retried: 'Delivery queued again.',
  'webhook-saved': 'Endpoint saved.',
  'webhook-deleted': 'Endpoint deleted.',
  'destination-created': 'Destination added.',
  'destination-saved': 'Destination saved.',
  'credentials-saved': 'Credentials replaced. A suspended destination is resumed with them.',
  'destination-resumed': 'Destination resumed: its waiting events are being sent.',
  'destination-deleted': 'Destination deleted.',
  'event-replayed': 'Queued to be sent again: the status changes once the platform has answered.',
};

/** The notice a redirect asked for with `?done=`, if it names one. */
export function noticeOf(request: FastifyRequest): Flash {
  const done = (request.query as Record<string, string> | undefined)?.['done'];
  return { notice: done === undefined ? undefined : NOTICES[done] };
}

export const one = (form: Form, key: string): string | undefined => {
  const value = form[key];
  return Array.isArray(value) ? value[0] : value;
};

/** The form's non-empty fields (what the API would receive), validated by the API's schema. */
export function input<T>(validate: (value: unknown) => T, form: Form, fields: string[]): T {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const value = one(form, field)?.trim();
    if (value !== undefined && value !== '') body[field] = value;
  }
  return validate(body);
}

/** A refusal the person can fix (shown on the page), as opposed to a fault (the error page). */
const isRefusal = (error: unknown): error is TrackwayError =>
  error instanceof TrackwayError &&
  error.code !== 'internal' &&
  error.code !== 'service_unavailable' &&
  error.code !== 'rate_limited';

/** The API's status for a refusal, so a form answers as the route behind it would. */
const REFUSAL_STATUS: Partial<Record<string, number>> = {
  invalid_request: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
};

export class Screens {
  constructor(
    private readonly app: App,
    private readonly deps: AppDeps,
    private readonly send: (reply: FastifyReply, markup: Html, status?: number) => FastifyReply,
  ) {}

  ctx(request: FastifyRequest): WebhookContext {
    return webhookContextOf(this.deps, request);
  }

  show(request: FastifyRequest, reply: FastifyReply, screen: Screen): FastifyReply {
    const { section, title, body, flash = {}, status = 200 } = screen;
    return this.send(
      reply,
      page({ title, section, account: request.account, body, flash }),
      status,
    );
  }

  /**
   * A GET page; `flash` carries the notice a redirect named. The pixel last shown is
   * remembered (a cookie, the id only) and shown again by a page opened without `pixel_id`;
   * a pixel of another account is never found by it (every read is account-scoped). A page
   * that is not found (an unknown URL, another account's pixel) answers 404 inside the layout.
   */
  page<P = Record<string, string>>(
    path: string,
    render: (
      request: Request<P>,
      ctx: WebhookContext,
      flash: Flash,
      reply: FastifyReply,
    ) => Promise<Screen>,
  ): void {
    this.app.get<{ Params: P; Querystring: Record<string, string> }>(
      path,
      { schema: { hide: true } },
      async (request, reply) => {
        const query = request.query;
        const asked = query['pixel_id'];
        if (asked !== undefined && PIXEL_ID.test(asked)) {
          reply.header('set-cookie', rememberCookie(request, asked));
        } else if (asked === undefined) {
          const remembered = cookieValue(request, REMEMBER_COOKIE);
          if (remembered !== null && PIXEL_ID.test(remembered)) query['pixel_id'] = remembered;
        }
        let screen: Screen;
        try {
          screen = await render(request as Request<P>, this.ctx(request), noticeOf(request), reply);
        } catch (error) {
          if (!(error instanceof TrackwayError) || error.code !== 'not_found') throw error;
          screen = notFoundScreen(request.url, error.message);
        }
        return this.show(request, reply, screen);
      },
    );
  }

  /**
   * A form action. `run` answers where to go next (a URL: 303 redirect) or a screen to render
   * now; a refusal renders `refused(message)` (status 400 unless it says otherwise).
   */
  form<P = Record<string, string>>(
    path: string,
    run: (request: Request<P>, ctx: WebhookContext) => Promise<string | Screen>,
    refused: (request: Request<P>, ctx: WebhookContext, message: string) => Promise<Screen>,
  ): void {
    this.app.post<{ Params: P; Body: Form }>(
      path,
      { schema: { hide: true } },
      async (request, reply) => {
        const r = request as Request<P>;
        const ctx = this.ctx(request);
        try {
          const outcome = await run(r, ctx);
          if (typeof outcome === 'string') return reply.redirect(outcome, 303);
          return this.show(request, reply, outcome);
        } catch (error) {
          if (!isRefusal(error)) throw error;
          const screen = await refused(r, ctx, error.message);
          return this.show(request, reply, {
            ...screen,
            flash: { error: error.message },
            status: screen.status ?? REFUSAL_STATUS[error.code] ?? 400,
          });
        }
      },
    );
  }
}

const REMEMBER_COOKIE = 'tw_pixel';
/** What a pixel id looks like: nothing else is written into or read from the cookie. */
const PIXEL_ID = /^[A-Za-z0-9_-]{1,64}$/;

function cookieValue(request: FastifyRequest, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=') || null;
  }
  return null;
}

function rememberCookie(request: FastifyRequest, pixelId: string): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${REMEMBER_COOKIE}=${pixelId}; Path=/dashboard; Max-Age=31536000; HttpOnly; SameSite=Strict${secure}`;
}

/** The section whose path is the longest prefix of `url`, for the 404's navigation. */
function sectionOf(url: string): Section {
  const path = url.split('?')[0] ?? '';
  let best: Section = '/dashboard';
  for (const item of NAV) {
    if (path.startsWith(item.path) && item.path.length > best.length) best = item.path;
  }
  return best;
}

export function notFoundScreen(url: string, message: string): Screen {
  return {
    section: sectionOf(url),
    title: 'Page not found',
    body: html`<p>${message}</p>
<p>It may have been deleted, or the link may be mistyped. <a href="/dashboard">Back to the overview</a>.</p>`,
    status: 404,
  };
}
