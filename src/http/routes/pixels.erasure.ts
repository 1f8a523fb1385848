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
      const { deleted, kinds } = await erasePerson({
        ctx,
        pixelId: request.params.pixel_id,
        input: request.body,
      });
      // The audit trail of a data-subject request: who, where, how many and by which kinds of
      // key. Never the values, not even hashed (a hash of an email identifies the person).
      request.log.info(
        {
          audit: 'erasure',
          account_id: ctx.account.id,
          pixel_id: request.params.pixel_id,
          all_pixels: request.body.all_pixels === true,
          keys: kinds,
          deleted,
        },
        'events erased',
      );
      return { deleted };
    },
  );
}
