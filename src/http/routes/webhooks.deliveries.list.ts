import { PageQuerySchema } from '../../domain/pixels/schemas.ts';
import { listDeliveries } from '../../domain/webhooks/endpoints.ts';
import { DeliveryListSchema, WebhookIdParams } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerListDeliveries(app: App, deps: AppDeps): void {
  app.get(
    '/v1/webhooks/:webhook_id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List delivery attempts',
        description: 'One row per attempt, newest first. `pending` is an attempt in flight.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        querystring: PageQuerySchema,
        response: { 200: DeliveryListSchema, ...errorResponses },
      },
    },
    async (request) =>
      listDeliveries({
        ctx: contextOf(deps, request),
        id: request.params.webhook_id,
        query: request.query,
      }),
  );
}
