import {
  DestinationIdParams,
  DestinationSchema,
  UpdateDestinationSchema,
} from '../../domain/forwarding/destination-schemas.ts';
import { updateDestination } from '../../domain/forwarding/destinations.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerUpdateDestination(app: App, deps: AppDeps): void {
  app.patch(
    '/v1/pixels/:pixel_id/destinations/:destination_id',
    {
      schema: {
        operationId: 'updateDestination',
        summary: 'Update a destination',
        description:
          '`name`, `config` (fields given replace those stored; secrets may be left out), `events`, `enabled`. New credentials or `{"enabled": true}` resume a suspended destination; its waiting events are then sent.',
        tags: ['Destinations'],
        params: DestinationIdParams,
        body: UpdateDestinationSchema,
        response: { 200: DestinationSchema, ...errorResponses },
      },
    },
    async (request) =>
      updateDestination({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        id: request.params.destination_id,
        input: request.body,
      }),
  );
}
