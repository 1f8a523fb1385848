import { Type } from '@sinclair/typebox';
import { DestinationIdParams } from '../../domain/forwarding/destination-schemas.ts';
import { deleteDestination } from '../../domain/forwarding/destinations.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerDeleteDestination(app: App, deps: AppDeps): void {
  app.delete(
    '/v1/pixels/:pixel_id/destinations/:destination_id',
    {
      schema: {
        operationId: 'deleteDestination',
        summary: 'Delete a destination',
        description: 'Events still waiting for it are not sent.',
        tags: ['Destinations'],
        params: DestinationIdParams,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      deleteDestination({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        id: request.params.destination_id,
      }),
  );
}
