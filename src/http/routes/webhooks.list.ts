import { listWebhooks } from '../../domain/webhooks/endpoints.ts';
import { WebhookListSchema } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerListWebhooks(app: App, deps: AppDeps): void {
  app.get(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        tags: ['Webhooks'],
        response: { 200: WebhookListSchema, ...errorResponses },
      },
    },
    async (request) => listWebhooks({ ctx: contextOf(deps, request) }),
  );
}
