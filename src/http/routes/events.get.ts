import { Type } from '@sinclair/typebox';
import { EventRecordSchema } from '../../domain/events/schemas.ts';
import { getEventWithForwarding } from '../../domain/forwarding/event-forwarding.ts';
import { ForwardingWithLogSchema } from '../../domain/forwarding/forwarding-record.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, NoQuerySchema } from '../route-kit.ts';

const { forwarding: _forwarding, ...recordFields } = EventRecordSchema.properties;

export function registerGetEvent(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id/events/:event_id',
    {
      schema: {
        operationId: 'getEvent',
        summary: 'Get one event with its forwarding ledger',
        description:
          'The stored record; each `forwarding` entry also carries `attempt_log`: every request that carried the event to that destination, with the first 1 KB of the answer.',
        tags: ['Events'],
        params: Type.Object({
          pixel_id: Type.String({ description: 'Pixel identifier (`px_…`).' }),
          event_id: Type.String({ description: "The event's `event_id`." }),
        }),
        querystring: NoQuerySchema,
        response: {
          200: Type.Object({ ...recordFields, forwarding: Type.Array(ForwardingWithLogSchema) }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      getEventWithForwarding({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        eventId: request.params.event_id,
      }),
  );
}
