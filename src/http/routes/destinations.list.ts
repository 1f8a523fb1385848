import { DestinationListSchema } from '../../domain/forwarding/destination-schemas.ts';
import { listDestinations } from '../../domain/forwarding/destinations.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, NoQuerySchema, PixelIdParams } from '../route-kit.ts';

export function registerListDestinations(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id/destinations',
    {
      schema: {
        operationId: 'listDestinations',
        summary: "List a pixel's destinations",
        description: 'Oldest first, secrets masked.',
        tags: ['Destinations'],
        params: PixelIdParams,
        querystring: NoQuerySchema,
        response: { 200: DestinationListSchema, ...errorResponses },
      },
    },
    async (request) =>
      listDestinations({ ctx: contextOf(deps, request), pixelId: request.params.pixel_id }),
  );
}
