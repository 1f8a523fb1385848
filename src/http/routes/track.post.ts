import { TrackEventResponseSchema, TrackEventSchema } from '../../domain/events/schemas.ts';
import { trackEvent } from '../../domain/events/track-event.ts';
import type { App, AppDeps } from '../deps.ts';
import { bodyValidatedBy, contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

export function registerTrack(app: App, deps: AppDeps): void {
  app.post(
    '/v1/track',
    {
      schema: {
        operationId: 'trackEvent',
        summary: 'Track an event',
        description:
          'Validates the event, hashes `user_data`, deduplicates on `(pixel_id, event_id)` and answers 200 only once the event is durably committed.',
        tags: ['Events'],
        body: TrackEventSchema,
        response: {
          200: TrackEventResponseSchema,
          ...errorResponses,
          409: ErrorSchema,
          413: ErrorSchema,
          415: ErrorSchema,
        },
      },
      // trackEvent validates the body: its format checks come before unknown fields (§3).
      validatorCompiler: bodyValidatedBy(),
    },
    async (request) => trackEvent({ ctx: contextOf(deps, request), input: request.body }),
  );
}
