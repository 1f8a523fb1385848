import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../deps.ts';
import { ErrorSchema } from '../route-kit.ts';

export function registerHealthRoutes(app: App, deps: AppDeps): void {
  // Process up: no dependencies checked, so an orchestrator never restarts a healthy process
  // because its database blinked.
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process is up',
        tags: ['Health'],
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: storage is reachable',
        tags: ['Health'],
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: ErrorSchema },
      },
    },
    async (request, reply) => {
      try {
        await deps.store.ping();
        return { status: 'ready' as const };
      } catch (error) {
        request.log.warn({ err: error }, 'storage not reachable');
        return reply
          .code(503)
          .send({ error: 'Service unavailable', message: 'Storage is not reachable' });
      }
    },
  );
}
