import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses, PixelIdParams } from '../route-kit.ts';
import { DEFAULT_HEARTBEAT_MS, type OpenStreams, streamEvents } from '../sse.ts';

export function registerStreamEvents(app: App, deps: AppDeps, streams: OpenStreams): void {
  app.get(
    '/v1/pixels/:pixel_id/events/stream',
    {
      schema: {
        operationId: 'streamEvents',
        summary: "Follow a pixel's events as they are stored (Server-Sent Events)",
        description:
          'Each newly stored event of the pixel, stored by any instance, as an `event` message whose data is the event record and whose `id` is its arrival number. Send `Last-Event-ID` to receive first the events stored since that one (at most 1,000). A comment every 15 s keeps the connection alive. An account may hold 20 streams open at once (over every instance): the next is 429 with `retry_after`. A stream whose client stops reading is closed once 1 MB waits unsent (reconnect with `Last-Event-ID`); a stream ends within a second of its key being revoked.',
        tags: ['Events'],
        params: PixelIdParams,
        response: {
          200: {
            description: '`text/event-stream`',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      await streamEvents({
        ctx: contextOf(deps, request),
        pixelId: request.params.pixel_id,
        request,
        reply,
        streams,
        // Auth set it: the route takes a key (an ingest key never reaches here).
        credential: { kind: 'key', keyId: request.apiKey?.id ?? '' },
        heartbeatMs: deps.liveTailHeartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      });
    },
  );
}
