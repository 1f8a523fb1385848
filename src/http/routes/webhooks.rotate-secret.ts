import { rotateWebhookSecret } from '../../domain/webhooks/endpoints.ts';
import { WebhookIdParams, WebhookWithSecretSchema } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../app.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerRotateWebhookSecret(app: App, deps: AppDeps): void {
  app.post(
    '/v1/webhooks/:webhook_id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description:
          'Returns the new secret. For 24 hours the old secret keeps signing beside it (a second `webhook-signature` entry); `X-Service-Signature` uses the new one at once.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        response: { 200: WebhookWithSecretSchema, ...errorResponses },
      },
    },
    async (request) =>
      rotateWebhookSecret({ ctx: contextOf(deps, request), id: request.params.webhook_id }),
  );
}
