import type { App, AppDeps } from '../deps.ts';

export function registerHealthRoutes(app: App, deps: AppDeps): void {
  // Process up: no dependencies checked, so an orchestrator never restarts a healthy process
  // because its database blinked.
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    try {
      await deps.store.ping();
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'storage not reachable');
      return reply
        .code(503)
        .send({ error: 'Service unavailable', message: 'Storage is not reachable' });
    }
  });
}
