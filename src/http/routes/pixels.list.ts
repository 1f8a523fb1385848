import { listPixels } from '../../domain/pixels/pixels.ts';
import { PageQuerySchema, PixelListSchema } from '../../domain/pixels/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerListPixels(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels',
    {
      schema: {
        operationId: 'listPixels',
        summary: "List the account's pixels",
        description: 'Newest first.',
        tags: ['Pixels'],
        querystring: PageQuerySchema,
        response: { 200: PixelListSchema, ...errorResponses },
      },
    },
    async (request) => listPixels({ ctx: contextOf(deps, request), query: request.query }),
  );
}
