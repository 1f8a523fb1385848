import { updatePixel } from '../../domain/pixels/pixels.ts';
import { PixelSchema, UpdatePixelSchema } from '../../domain/pixels/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, ErrorSchema, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerUpdatePixel(app: App, deps: AppDeps): void {
  app.patch(
    '/v1/pixels/:pixel_id',
    {
      schema: {
        operationId: 'updatePixel',
        summary: 'Update a pixel',
        description:
          'Changes the fields sent. Emits `pixel.updated` with `previous_attributes` when something changed. A `paused` pixel refuses new events with 409.',
        tags: ['Pixels'],
        params: PixelIdParams,
        body: UpdatePixelSchema,
        response: { 200: PixelSchema, ...errorResponses, 413: ErrorSchema, 415: ErrorSchema },
      },
    },
    async (request) => {
      const pixel = await updatePixel({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        input: request.body,
      });
      return pixel;
    },
  );
}
