import {
  CreateDestinationSchema,
  DestinationSchema,
} from '../../domain/forwarding/destination-schemas.ts';
import { createDestination } from '../../domain/forwarding/destinations.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerCreateDestination(app: App, deps: AppDeps): void {
  app.post(
    '/v1/pixels/:pixel_id/destinations',
    {
      schema: {
        operationId: 'createDestination',
        summary: 'Add a destination to a pixel',
        description:
          'Every event the pixel stores from now on is forwarded to it (its `events` filter allowing). Secrets in `config` are write-only: answers show `****` and their last 4 characters. At most 10 a pixel.',
        tags: ['Destinations'],
        params: PixelIdParams,
        body: CreateDestinationSchema,
        response: { 201: DestinationSchema, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await createDestination({
          ctx: contextOf(deps, request),
          pixelId: request.params.pixel_id,
          input: request.body,
        }),
      ),
  );
}
