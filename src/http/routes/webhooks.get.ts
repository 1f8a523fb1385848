import { getWebhook } from '../../domain/webhooks/endpoints.ts';
import { WebhookIdParams, WebhookSchema } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerGetWebhook(app: App, deps: AppDeps): void {
  app.get(
    '/v1/webhooks/:webhook_id',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        response: { 200: WebhookSchema, ...errorResponses },
      },
    },
    async (request) => getWebhook({ ctx: contextOf(deps, request), id: request.params.webhook_id }),
  );
}
