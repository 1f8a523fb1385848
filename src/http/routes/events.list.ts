import { listEvents } from '../../domain/events/list-events.ts';
import { EventListSchema, ListEventsQuerySchema } from '../../domain/events/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerListEvents(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: "List a pixel's events",
        description:
          'Newest first (`timestamp` descending, then arrival). `start_date` and `end_date` are inclusive; a date alone covers that whole UTC day.',
        tags: ['Events'],
        params: PixelIdParams,
        querystring: ListEventsQuerySchema,
        response: { 200: EventListSchema, ...errorResponses },
      },
    },
    async (request) =>
      listEvents({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        query: request.query,
      }),
  );
}
