import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { App } from '../deps.ts';

/** Browsers and CDNs may reuse the snippet this long, then revalidate it by its ETag. */
export const PIXEL_SCRIPT_MAX_AGE_SECONDS = 3_600;

/** The snippet, read once at start (copied next to the compiled code by the build). */
export function pixelScript(): { body: Buffer; etag: string } {
  const body = readFileSync(new URL('../snippet/pixel.js', import.meta.url));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, etag };
}

export function registerPixelScript(app: App): void {
  const { body, etag } = pixelScript();
  app.get(
    '/v1/pixel.js',
    {
      // A script, not a JSON operation: documented in docs/api.md, not in the OpenAPI document.
      schema: {
        hide: true,
        operationId: 'getPixelScript',
        summary: 'The browser snippet',
        description:
          'Plain JavaScript, no dependency, under 3 KB gzipped: `<script async src="https://<tracking domain or proxy path>/v1/pixel.js" data-key="tw_pub_…"></script>`. Sends a `PageView` on load and on `history.pushState` (unless `data-auto-pageview="false"`), exposes `trackway("track", name, props)` (returns the `event_id`) and `trackway("consent", …)`; with `data-require-consent="true"` it sets no cookie and sends nothing until `ad_user_data` is granted. Cached (`ETag`, `max-age`; `If-None-Match` gets a 304). Answered as `text/javascript`.',
        tags: ['Browser'],
        security: [],
      },
    },
    async (request, reply) => {
      reply.headers({
        etag,
        'cache-control': `public, max-age=${PIXEL_SCRIPT_MAX_AGE_SECONDS}`,
        'content-type': 'text/javascript; charset=utf-8',
        // Loaded by the shop's pages from the tracking domain: a cross-origin script.
        'cross-origin-resource-policy': 'cross-origin',
      });
      const match = request.headers['if-none-match'];
      if (match?.split(',').some((tag) => tag.trim() === etag)) {
        return reply.code(304).send(null);
      }
      return reply.send(body as unknown as string);
    },
  );
}
