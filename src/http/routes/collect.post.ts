import { assertApiAccess } from '../../domain/accounts/accounts.ts';
import { type BrowserFacts, readCollectBody } from '../../domain/collect/browser-event.ts';
import { collectEvent } from '../../domain/collect/collect-event.ts';
import { CollectResponseSchema, CollectSchema } from '../../domain/collect/schemas.ts';
import {
  firstPartyCookieDomain,
  isPixelSite,
  META_COOKIE_DAYS,
  originHostname,
  parseCookieHeader,
  setCookie,
  VISITOR_COOKIE_DAYS,
} from '../../domain/collect/sites.ts';
import { RateLimitedError, TrackwayError } from '../../domain/errors.ts';
import { newEventId } from '../../domain/ids.ts';
import type { Account, Pixel } from '../../domain/model.ts';
import { TtlCache } from '../../domain/ttl-cache.ts';
import { BotCheck } from '../bot-check.ts';
import { allowOrigin, originRefused } from '../collect-kit.ts';
import type { App, AppDeps } from '../deps.ts';
import { limitAccount } from '../rate-limit.ts';
import { bodyValidatedBy, ErrorSchema, errorResponses } from '../route-kit.ts';

/** A browser body's limit: one event, far under the server routes' 32 KB. */
export const MAX_COLLECT_BODY_BYTES = 16_384;
/** Browser events one IP may send one pixel per UTC minute: a person browsing sends far fewer. */
export const COLLECT_PER_IP_PER_MINUTE = 120;
/** How long lookups by publishable key and account are reused (as the API key cache's). */
const LOOKUP_TTL_MS = 1_000;

const invalidKey = () => new TrackwayError('unauthorized', 'Invalid publishable key');

export function registerCollect(app: App, deps: AppDeps): void {
  const pixels = new TtlCache<Pixel | null>(deps.clock, LOOKUP_TTL_MS, {
    keep: (pixel) => pixel !== null,
  });
  const accounts = new TtlCache<Account | null>(deps.clock, LOOKUP_TTL_MS, {
    keep: (account) => account !== null,
  });
  const bots = new BotCheck();

  app.post(
    '/v1/collect',
    {
      bodyLimit: MAX_COLLECT_BODY_BYTES,
      schema: {
        operationId: 'collectEvent',
        summary: 'Collect a browser event',
        description: `For the snippet (\`/v1/pixel.js\`), not for servers: one browser event, authenticated by the pixel's publishable key and accepted only from the pixel's own sites (the \`Origin\`'s hostname is its \`domain\`, a subdomain of it, or its \`tracking_domain\`; anything else, or no \`Origin\`, is a 403 without CORS headers). \`application/json\` or \`text/plain\` (sendBeacon), at most ${MAX_COLLECT_BODY_BYTES} bytes. The IP comes from the connection and the user agent from its header, never from the body. The event then goes the way of a server event: same deduplication, durable commit, webhooks and forwarding, with \`source: "browser"\`. On a host under the pixel domain's registrable domain the answer sets the first-party cookies \`_tw_id\`, \`_fbp\` (when the visitor has none) and \`_fbc\` (from a new fbclid), except under \`ad_user_data: "denied"\`. ${COLLECT_PER_IP_PER_MINUTE} events a minute per IP and pixel (429); known bots get 200 and are not stored.`,
        tags: ['Browser'],
        security: [],
        body: CollectSchema,
        response: {
          200: CollectResponseSchema,
          ...errorResponses,
          409: ErrorSchema,
          413: ErrorSchema,
          415: ErrorSchema,
        },
      },
      // readCollectBody drops what it does not know before validating.
      validatorCompiler: bodyValidatedBy(),
      // The origin is checked before the body is read: a page elsewhere costs no parsing.
      onRequest: (request, _reply, done) => {
        done(
          originHostname(request.headers.origin) === null
            ? originRefused(request.headers.origin)
            : undefined,
        );
      },
    },
    async (request, reply) => {
      const now = deps.clock.now();
      const origin = request.headers.origin as string;
      const body = request.body as Record<string, unknown> | undefined;
      const key = typeof body?.['key'] === 'string' ? body['key'] : null;
      if (key === null || !key.startsWith('tw_pub_') || key.length > 64) throw invalidKey();
      const pixel = await pixels.get(key, () => deps.store.pixels.findByPublishableKey(key, now));
      if (!pixel) throw invalidKey();
      if (!isPixelSite(pixel, originHostname(origin)!)) throw originRefused(origin);
      allowOrigin(reply, origin);
      // Read once: behind a trusted proxy each read parses X-Forwarded-For again.
      const ip = request.ip;

      const limiter = deps.rateLimiter;
      if (limiter) {
        const decision = await limiter.consume(
          `collect:${pixel.id}:${ip}`,
          [{ window: 'minute', limit: COLLECT_PER_IP_PER_MINUTE }],
          now,
        );
        if (!decision.allowed) {
          throw new RateLimitedError(
            Math.max(1, Math.ceil(decision.windows[0]!.resetAt - now.getTime() / 1000)),
          );
        }
      }
      const userAgent = request.headers['user-agent'];
      if (userAgent !== undefined && bots.isBot(userAgent)) {
        deps.metrics?.collectBots.inc();
        const sent = body?.['event_id'];
        return { event_id: typeof sent === 'string' && sent !== '' ? sent : newEventId() };
      }
      const { input, dropped } = readCollectBody(body);
      if (dropped > 0) deps.metrics?.collectDroppedFields.inc(dropped);

      const account = await accounts.get(pixel.accountId, () =>
        deps.store.accounts.getAccount(pixel.accountId),
      );
      if (!account) throw invalidKey();
      assertApiAccess(account);
      request.account = account;
      if (limiter) await limitAccount(limiter, account, now, reply);

      const consented = input.consent?.ad_user_data !== 'denied';
      const cookieDomain = consented ? firstPartyCookieDomain(pixel, request.hostname) : null;
      const facts: BrowserFacts = {
        ip,
        userAgent,
        cookieHeader: parseCookieHeader(request.headers.cookie),
        now,
        firstParty: cookieDomain !== null,
      };
      const ctx = { store: deps.store, clock: deps.clock, account };
      const { eventId, browser } = await collectEvent({ ctx, pixel, input, facts });
      if (cookieDomain !== null) {
        const options = { domain: cookieDomain, secure: request.protocol === 'https' };
        const cookies = [
          setCookie('_tw_id', input.anonymous_id, { ...options, days: VISITOR_COOKIE_DAYS }),
          browser.madeFbp &&
            setCookie('_fbp', browser.madeFbp, { ...options, days: META_COOKIE_DAYS }),
          browser.madeFbc &&
            setCookie('_fbc', browser.madeFbc, { ...options, days: META_COOKIE_DAYS }),
        ].filter((c): c is string => typeof c === 'string');
        if (cookies.length > 0) reply.header('set-cookie', cookies);
      }
      return { event_id: eventId };
    },
  );
}
