import { createWebhook } from '../../domain/webhooks/endpoints.ts';
import { CreateWebhookSchema, WebhookWithSecretSchema } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { errorResponses, webhookContextOf } from '../route-kit.ts';

export function registerCreateWebhook(app: App, deps: AppDeps): void {
  app.post(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description:
          'The response carries the signing `secret`; it is shown only here and in rotate-secret responses. Destinations must be https and resolve to public addresses.',
        tags: ['Webhooks'],
        body: CreateWebhookSchema,
        response: { 201: WebhookWithSecretSchema, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await createWebhook({ ctx: webhookContextOf(deps, request), input: request.body })),
  );
}
