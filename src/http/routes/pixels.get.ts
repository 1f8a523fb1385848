import { getPixel } from '../../domain/pixels/pixels.ts';
import { PixelDetailSchema } from '../../domain/pixels/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerGetPixel(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id',
    {
      schema: {
        operationId: 'getPixel',
        summary: 'Get a pixel',
        tags: ['Pixels'],
        params: PixelIdParams,
        response: { 200: PixelDetailSchema, ...errorResponses },
      },
    },
    async (request) =>
      getPixel({ ctx: contextOf(deps, request), pixelId: request.params.pixel_id }),
  );
}
