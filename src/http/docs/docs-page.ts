/**
 * The API reference at /docs (issue 34): Redoc's standalone bundle, served from node_modules
 * (no outside network: no CDN, no web fonts), under Trackway's own name and colours. Redoc over
 * Swagger UI and Scalar: docs/decisions.md, "The API reference page".
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

/**
 * Own scripts only; Redoc styles itself with inline styles (styled-components) and runs its
 * search index in a worker it makes from a blob.
 */
const CSP =
  "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; " +
  "script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'";

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const asset = (file: string | Buffer, type: string): Asset => {
  const body = typeof file === 'string' ? readFileSync(file) : file;
  return {
    body,
    type,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trackway API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/docs.css">
<script src="/docs/assets/redoc.standalone.js" defer></script>
<script src="/docs/assets/docs.js" defer></script>
</head>
<body>
<header class="docs-top"><a class="brand" href="/docs">Trackway</a> <span>API reference</span> <a href="/dashboard">Dashboard</a></header>
<main id="redoc" data-spec="/docs/json"><p class="loading">Loading the API reference…</p></main>
</body>
</html>
`;

export function registerDocsPage(
  app: FastifyInstance,
  spec: (request: { protocol: string; host: string }) => unknown,
): void {
  // The bundle's one outside request, the footer's logo (cdn.redoc.ly), becomes an empty image:
  // the page asks nothing of any other host (its CSP would refuse it anyway).
  const redoc = readFileSync(
    require.resolve('redoc/bundles/redoc.standalone.js'),
    'utf8',
  ).replaceAll('https://cdn.redoc.ly/redoc/logo-mini.svg', 'data:,');
  const assets = new Map<string, Asset>([
    ['redoc.standalone.js', asset(Buffer.from(redoc), 'text/javascript')],
    ['docs.js', asset(join(here, 'docs.js'), 'text/javascript')],
    ['docs.css', asset(join(here, 'docs.css'), 'text/css')],
  ]);
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(PAGE),
  );
  // The document, its `servers` naming the server showing the page, wherever it runs.
  app.get('/docs/json', { schema: { hide: true } }, async (request) => spec(request));
  app.get<{ Params: { file: string } }>(
    '/docs/assets/:file',
    { schema: { hide: true } },
    async (request, reply) => {
      const file = assets.get(request.params.file);
      if (!file) {
        return reply
          .code(404)
          .send({ error: 'Not found', message: `Route not found: GET ${request.url}` });
      }
      reply.header('etag', file.etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.type(file.type).send(file.body);
    },
  );
}
