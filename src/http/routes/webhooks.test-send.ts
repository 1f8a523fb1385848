import { Type } from '@sinclair/typebox';
import { sendTestWebhook } from '../../domain/webhooks/endpoints.ts';
import { TestWebhookSchema, WebhookIdParams } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerTestWebhook(app: App, deps: AppDeps): void {
  app.post(
    '/v1/webhooks/:webhook_id/test',
    {
      schema: {
        operationId: 'sendTestWebhook',
        summary: 'Send a test message',
        description:
          'Sends one message of the given kind (default `event.tracked`) with sample data, whatever the endpoint subscribes to. The body is optional.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        body: { ...TestWebhookSchema, 'x-optional-body': true },
        response: {
          202: Type.Object({
            message_id: Type.String(),
            webhook_id: Type.String(),
            event: Type.String(),
            status: Type.Literal('pending'),
          }),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const sent = await sendTestWebhook({
        ctx: contextOf(deps, request),
        id: request.params.webhook_id,
        input: request.body,
      });
      return reply.code(202).send(sent);
    },
  );
}
