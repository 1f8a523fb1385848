import { TrackEventSchema, ValidateEventResponseSchema } from '../../domain/events/schemas.ts';
import { validateEvent } from '../../domain/events/validate-event.ts';
import type { App, AppDeps } from '../deps.ts';
import { bodyValidatedBy, contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

export function registerValidateTrack(app: App, deps: AppDeps): void {
  app.post(
    '/v1/track/validate',
    {
      schema: {
        operationId: 'validateEvent',
        summary: 'Validate an event without sending it',
        description:
          "Takes a `/v1/track` body and answers with the record `/v1/track` would store (normalised and hashed) and, for each of the pixel's destinations, whether it would be forwarded, why not, and the exact request body it would be sent (not for an `ingest`-scope key: it sees only the event's own validity and record). Nothing is stored or sent; the call counts against the rate limit. Bad input gets the same 400 as `/v1/track`.",
        tags: ['Events'],
        body: TrackEventSchema,
        response: {
          200: ValidateEventResponseSchema,
          ...errorResponses,
          409: ErrorSchema,
          413: ErrorSchema,
          415: ErrorSchema,
        },
      },
      // Same validator as /v1/track: validateEvent runs the track checks in the same order.
      validatorCompiler: bodyValidatedBy(),
    },
    async (request) =>
      validateEvent({
        ctx: contextOf(deps, request),
        input: request.body,
        scope: request.apiKey?.scope ?? 'full',
      }),
  );
}
