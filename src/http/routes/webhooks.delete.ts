import { Type } from '@sinclair/typebox';
import { deleteWebhook } from '../../domain/webhooks/endpoints.ts';
import { WebhookIdParams } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerDeleteWebhook(app: App, deps: AppDeps): void {
  app.delete(
    '/v1/webhooks/:webhook_id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        description: 'Deliveries still queued for it are cancelled.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      deleteWebhook({ ctx: contextOf(deps, request), id: request.params.webhook_id }),
  );
}
