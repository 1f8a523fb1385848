import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { EXPORT_CONTENT_TYPES, exportEvents } from '../../domain/lifecycle/export.ts';
import { ExportQuerySchema } from '../../domain/lifecycle/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';

export function registerExportEvents(app: App, deps: AppDeps): void {
  app.get(
    '/v1/pixels/:pixel_id/events/export',
    {
      schema: {
        operationId: 'exportEvents',
        summary: "Export a pixel's events",
        description:
          "Every event of the pixel in the range, oldest first (`timestamp`, then arrival), streamed: the server holds one page of events at a time and reads the next only as the client takes the previous. A response cut short ends without its last line's newline (ndjson) or row (csv).",
        tags: ['Events'],
        params: PixelIdParams,
        querystring: ExportQuerySchema,
        response: {
          200: {
            description: 'The records, as `application/x-ndjson` or `text/csv`.',
            content: {
              'application/x-ndjson': { schema: Type.String() },
              'text/csv': { schema: Type.String() },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { format, chunks } = await exportEvents({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        query: request.query,
      });
      // Readable.from pulls the next page only when the socket has taken the last one
      // (back-pressure), and ends the generator if the client goes away.
      const body = Readable.from(chunks, { objectMode: false, highWaterMark: 1 });
      const name = `${request.params.pixel_id}-events.${format === 'csv' ? 'csv' : 'ndjson'}`;
      return (
        reply
          .type(EXPORT_CONTENT_TYPES[format])
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('cache-control', 'no-store')
          // A stream is sent as it is: the route's typed replies only describe JSON bodies.
          .send(body as unknown as string)
      );
    },
  );
}
