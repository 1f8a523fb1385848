import {
  DestinationIdParams,
  DestinationSchema,
} from '../../domain/forwarding/destination-schemas.ts';
import { getDestination } from '../../domain/forwarding/destinations.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, NoQuerySchema } from '../route-kit.ts';

export function registerGetDestination(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id/destinations/:destination_id',
    {
      schema: {
        operationId: 'getDestination',
        summary: 'Get a destination',
        description: 'With its `state` and `last_error`; secrets masked.',
        tags: ['Destinations'],
        params: DestinationIdParams,
        querystring: NoQuerySchema,
        response: { 200: DestinationSchema, ...errorResponses },
      },
    },
    async (request) =>
      getDestination({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        id: request.params.destination_id,
      }),
  );
}
