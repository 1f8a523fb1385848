import { listKeys } from '../../domain/keys/keys.ts';
import { KeyListSchema } from '../../domain/keys/schemas.ts';
import { PageQuerySchema } from '../../domain/pixels/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerListKeys(app: App, deps: AppDeps): void {
  app.get(
    '/v1/keys',
    {
      schema: {
        operationId: 'listKeys',
        summary: "List the account's API keys",
        description:
          'Oldest first, revoked keys included, a page at a time (`limit` default 50, at most 100; `offset`). The keys themselves are never shown again.',
        tags: ['Keys'],
        querystring: PageQuerySchema,
        response: { 200: KeyListSchema, ...errorResponses },
      },
    },
    async (request) => listKeys({ ctx: contextOf(deps, request), query: request.query }),
  );
}
