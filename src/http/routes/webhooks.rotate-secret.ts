import { rotateWebhookSecret } from '../../domain/webhooks/endpoints.ts';
import { WebhookIdParams, WebhookWithSecretSchema } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerRotateWebhookSecret(app: App, deps: AppDeps): void {
  app.post(
    '/v1/webhooks/:webhook_id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description:
          'Returns the new secret. For 24 hours (until `previous_secret_expires_at`) the old secret keeps signing: `X-Service-Signature` stays on the old secret and `webhook-signature` carries both; then only the new secret signs.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        response: { 200: WebhookWithSecretSchema, ...errorResponses },
      },
    },
    async (request) =>
      rotateWebhookSecret({ ctx: contextOf(deps, request), id: request.params.webhook_id }),
  );
}
