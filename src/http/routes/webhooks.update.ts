import { updateWebhook } from '../../domain/webhooks/endpoints.ts';
import {
  UpdateWebhookSchema,
  WebhookIdParams,
  WebhookSchema,
} from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { errorResponses, webhookContextOf } from '../route-kit.ts';

export function registerUpdateWebhook(app: App, deps: AppDeps): void {
  app.patch(
    '/v1/webhooks/:webhook_id',
    {
      schema: {
        operationId: 'updateWebhook',
        summary: 'Update a webhook endpoint',
        description:
          '`url`, `events`, `description`, `enabled`. Re-enabling resumes queued deliveries.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        body: UpdateWebhookSchema,
        response: { 200: WebhookSchema, ...errorResponses },
      },
    },
    async (request) => {
      const webhook = await updateWebhook({
        ctx: webhookContextOf(deps, request),
        id: request.params.webhook_id,
        input: request.body,
      });
      return webhook;
    },
  );
}
