import { createPixel } from '../../domain/pixels/pixels.ts';
import { CreatePixelSchema, PixelSchema } from '../../domain/pixels/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

export function registerCreatePixel(app: App, deps: AppDeps): void {
  app.post(
    '/v1/pixels',
    {
      schema: {
        operationId: 'createPixel',
        summary: 'Create a pixel',
        description:
          "Emits `pixel.created`. 403 when the plan's pixel quota is reached (pro 10, ultra 50, enterprise unlimited).",
        tags: ['Pixels'],
        body: CreatePixelSchema,
        response: { 201: PixelSchema, ...errorResponses, 413: ErrorSchema, 415: ErrorSchema },
      },
    },
    async (request, reply) => {
      const pixel = await createPixel({ ctx: contextOf(deps, request), input: request.body });
      return reply.code(201).send(pixel);
    },
  );
}
