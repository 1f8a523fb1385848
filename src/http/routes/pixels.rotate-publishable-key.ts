import { rotatePublishableKey } from '../../domain/pixels/pixels.ts';
import { PixelSchema } from '../../domain/pixels/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerRotatePublishableKey(app: App, deps: AppDeps): void {
  app.post(
    '/v1/pixels/:pixel_id/publishable-key/rotate',
    {
      schema: {
        operationId: 'rotatePublishableKey',
        summary: 'Rotate the publishable key',
        description:
          'Returns the pixel with a new `publishable_key`. The old key keeps working on `POST /v1/collect` for 24 hours, so pages cached with it lose no events; then it is refused (401).',
        tags: ['Pixels'],
        params: PixelIdParams,
        response: { 200: PixelSchema, ...errorResponses },
      },
    },
    async (request) =>
      rotatePublishableKey({ ctx: contextOf(deps, request), pixelId: request.params.pixel_id }),
  );
}
