import {
  DestinationIdParams,
  ReplayDestinationSchema,
  ReplayResultSchema,
} from '../../domain/forwarding/destination-schemas.ts';
import { replayDestination } from '../../domain/forwarding/event-forwarding.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

export function registerReplayDestination(app: App, deps: AppDeps): void {
  app.post(
    '/v1/pixels/:pixel_id/destinations/:destination_id/replay',
    {
      schema: {
        operationId: 'replayDestination',
        summary: 'Send a time range of events to a destination again',
        description:
          "Queues the pixel's events with `timestamp` in the range whose outcome for this destination is one of `statuses`, and those with no outcome yet that the destination's filter takes. The answer says how many at once; they are queued in the background, 500 a transaction (about 100,000 a minute), resumed after a restart. An event being sent at that moment is left to that send. A disabled destination is refused with 409. Still subject to the platform's window; the platform deduplicates by `event_id`.",
        tags: ['Destinations'],
        params: DestinationIdParams,
        body: ReplayDestinationSchema,
        response: { 202: ReplayResultSchema, ...errorResponses, 409: ErrorSchema },
      },
    },
    async (request, reply) =>
      reply.code(202).send(
        await replayDestination({
          ctx: contextOf(deps, request),
          pixelId: request.params.pixel_id,
          id: request.params.destination_id,
          input: request.body,
        }),
      ),
  );
}
