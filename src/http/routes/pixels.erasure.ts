import { erasePerson } from '../../domain/lifecycle/erasure.ts';
import { ErasureResultSchema, ErasureSchema } from '../../domain/lifecycle/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, ErrorSchema, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerErasure(app: App, deps: AppDeps): void {
  app.post(
    '/v1/pixels/:pixel_id/erasure',
    {
      schema: {
        operationId: 'erasePersonData',
        summary: "Erase one person's events",
        description:
          'A data-subject erasure: every stored event of the pixel (of every pixel of the account with `all_pixels: true`) whose hashed `user_data` holds any of the given keys is deleted, with its counts. Values are normalised and hashed exactly as on ingest; a 64-hex value is taken as the hash. Events stored after the request are not covered.',
        tags: ['Events'],
        params: PixelIdParams,
        body: ErasureSchema,
        response: {
          200: ErasureResultSchema,
          ...errorResponses,
          413: ErrorSchema,
          415: ErrorSchema,
        },
      },
    },
    async (request) => {
      const ctx = contextOf(deps, request);
      // The audit trail of a data-subject request: who, where, by which kinds of key and how
      // many. Never the values, not even hashed (a hash of an email identifies the person).
      // Written when the erasure starts (one that dies half-way still leaves its line), then
      // again when it completes, with the count.
      const audit = {
        audit: 'erasure',
        account_id: ctx.account.id,
        pixel_id: request.params.pixel_id,
        all_pixels: request.body.all_pixels === true,
      };
      let keys: string[] = [];
      try {
        const { deleted } = await erasePerson({
          ctx,
          pixelId: request.params.pixel_id,
          input: request.body,
          onStart: (kinds) => {
            keys = kinds;
            request.log.info({ ...audit, status: 'started', keys }, 'erasure started');
          },
        });
        request.log.info({ ...audit, status: 'completed', keys, deleted }, 'events erased');
        return { deleted };
      } catch (error) {
        // Only an erasure that had started has a line to close.
        if (keys.length > 0) {
          request.log.warn({ ...audit, status: 'failed', keys }, 'erasure failed part-way');
        }
        throw error;
      }
    },
  );
}
