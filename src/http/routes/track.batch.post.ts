import { Type } from '@sinclair/typebox';
import {
  MAX_BATCH_EVENTS,
  type TrackBatchResponse,
  TrackBatchResponseSchema,
  TrackBatchSchema,
} from '../../domain/events/schemas.ts';
import { trackEvents } from '../../domain/events/track-batch.ts';
import { compileValidator } from '../../domain/validation.ts';
import { admitBatch, BatchAdmission } from '../batch-admission.ts';
import type { App, AppDeps } from '../deps.ts';
import { errorBody, MAX_BATCH_BODY_BYTES } from '../errors.ts';
import { bodyValidatedBy, contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

/**
 * Only the envelope is validated before the handler: each event is validated on its own by the
 * verb, so one bad event is answered in its slot instead of failing the whole batch.
 * TrackBatchSchema still declares the events' shape for the OpenAPI document and the types.
 */
const validateEnvelope = compileValidator(
  Type.Object(
    { events: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_EVENTS }) },
    { additionalProperties: false },
  ),
  // Each event's NUL check runs with its other checks, so it is answered in the event's slot.
  { checkText: false },
);

export function registerTrackBatch(app: App, deps: AppDeps): void {
  // Per process: at most 2 of an account's batches decoded at once, 8 of all accounts'.
  const admission = new BatchAdmission(deps.batchAdmission);
  app.post(
    '/v1/track/batch',
    {
      bodyLimit: MAX_BATCH_BODY_BYTES,
      // After the /v1 hook (authentication, rate limits), before the body is read.
      onRequest: admitBatch(admission),
      config: { envelopeDepth: 2 },
      schema: {
        operationId: 'trackEventBatch',
        summary: 'Track up to 1,000 events in one request',
        description:
          'Each event is handled exactly as `POST /v1/track` would handle it alone, and answered in its slot of `results` (same order, with its `index`): tracked, deduplicated, or the error object it would have got. The events that pass are committed together in one transaction before the response is sent. The response is 200 whenever the envelope is valid; check each slot. Body at most 524,288 bytes (after gzip decoding). Each server process handles at most 2 batches of one account at once and queues the next ones; past that queue (64 batches, or 20 s) a batch is answered 503 with `Retry-After: 1` and nothing stored: send it again.',
        tags: ['Events'],
        body: TrackBatchSchema,
        response: {
          200: TrackBatchResponseSchema,
          ...errorResponses,
          413: ErrorSchema,
          415: ErrorSchema,
        },
      },
      validatorCompiler: bodyValidatedBy(validateEnvelope),
    },
    async (request): Promise<TrackBatchResponse> => {
      // Unvalidated on purpose (see validateEnvelope): trackEvents validates each event.
      const inputs = request.body.events as unknown[];
      const outcomes = await trackEvents({ ctx: contextOf(deps, request), inputs });
      const response: TrackBatchResponse = {
        accepted: 0,
        deduplicated: 0,
        rejected: 0,
        results: [],
      };
      for (const [index, outcome] of outcomes.entries()) {
        if (outcome.ok) {
          if (outcome.response.deduplicated) response.deduplicated += 1;
          else response.accepted += 1;
          response.results.push({ index, status: 200, ...outcome.response });
          continue;
        }
        response.rejected += 1;
        if (outcome.cause !== undefined) {
          request.log.error({ err: outcome.cause, index }, 'event of a batch could not be stored');
        }
        const { status, body } = errorBody(outcome.error);
        response.results.push({ index, status, ...body });
      }
      return response;
    },
  );
}
