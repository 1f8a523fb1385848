import { Type } from '@sinclair/typebox';
import { retryDelivery } from '../../domain/webhooks/endpoints.ts';
import { DeliveryParams } from '../../domain/webhooks/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

export function registerRetryDelivery(app: App, deps: AppDeps): void {
  app.post(
    '/v1/webhooks/:webhook_id/deliveries/:message_id/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a message now',
        description:
          'Queues the message for this endpoint again, due at once, whatever its state (also after the schedule is exhausted). 409 while an attempt of it is being sent: a message is never sent twice at once.',
        tags: ['Webhooks'],
        params: DeliveryParams,
        response: {
          202: Type.Object({
            message_id: Type.String(),
            webhook_id: Type.String(),
            status: Type.Literal('pending'),
          }),
          ...errorResponses,
          409: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const queued = await retryDelivery({
        ctx: contextOf(deps, request),
        id: request.params.webhook_id,
        messageId: request.params.message_id,
      });
      return reply.code(202).send(queued);
    },
  );
}
