import { originHostname } from '../../domain/collect/sites.ts';
import { TtlCache } from '../../domain/ttl-cache.ts';
import { allowOrigin, originRefused } from '../collect-kit.ts';
import type { App, AppDeps } from '../deps.ts';

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The CORS preflight of `POST /v1/collect` (sent when a page posts `application/json`; the
 * snippet's text/plain needs none). A preflight carries no body, so no key: it is answered for
 * an origin that is one of any active pixel's sites, and the POST then checks its own pixel.
 */
export function registerCollectPreflight(app: App, deps: AppDeps): void {
  // Both answers are reused for a second: a hostile page's preflights cost one read a second.
  const sites = new TtlCache<boolean>(deps.clock, 1_000);
  app.options('/v1/collect', { schema: { hide: true } }, async (request, reply) => {
    const origin = request.headers.origin;
    const hostname = originHostname(origin);
    if (hostname === null) throw originRefused(origin);
    const known = await sites.get(hostname, () => deps.store.pixels.isPixelSite(hostname));
    if (!known) throw originRefused(origin);
    allowOrigin(reply, origin as string);
    reply.headers({
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Content-Type',
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
    });
    return reply.code(204).send();
  });
}
