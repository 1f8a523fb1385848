import { createKey } from '../../domain/keys/keys.ts';
import { CreatedKeySchema, CreateKeySchema } from '../../domain/keys/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, ErrorSchema, errorResponses } from '../route-kit.ts';

export function registerCreateKey(app: App, deps: AppDeps): void {
  app.post(
    '/v1/keys',
    {
      schema: {
        operationId: 'createKey',
        summary: 'Create an API key',
        description:
          'The response holds the key itself (`key`): the only time it is shown. Only its SHA-256 is stored.',
        tags: ['Keys'],
        body: CreateKeySchema,
        response: { 201: CreatedKeySchema, ...errorResponses, 413: ErrorSchema, 415: ErrorSchema },
      },
    },
    async (request, reply) => {
      const key = await createKey({ ctx: contextOf(deps, request), input: request.body });
      return reply.code(201).send(key);
    },
  );
}
