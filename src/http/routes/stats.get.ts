import { eventStatsJson } from '../../domain/stats/event-stats.ts';
import { type Stats, StatsQuerySchema, StatsSchema } from '../../domain/stats/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerGetStats(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id/stats',
    {
      schema: {
        operationId: 'getPixelStats',
        summary: "A pixel's events per hour or day",
        description:
          'Counts and revenue by event name per UTC bucket, from counts kept as events are stored. Every bucket the range touches is returned whole; at most 1,000 buckets (else 400).',
        tags: ['Events'],
        params: PixelIdParams,
        querystring: StatsQuerySchema,
        response: { 200: StatsSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const json = await eventStatsJson({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        query: request.query,
      });
      // Already JSON (written by the store, same shape as StatsSchema): sent as is, not
      // serialized again. Fastify passes a string through when the type says JSON; the cast
      // is for the type provider, which types `send` with the schema's object.
      return reply.type('application/json; charset=utf-8').send(json as unknown as Stats);
    },
  );
}
