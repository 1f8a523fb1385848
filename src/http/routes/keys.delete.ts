import { Type } from '@sinclair/typebox';
import { revokeKey } from '../../domain/keys/keys.ts';
import { KeyIdParams } from '../../domain/keys/schemas.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

export function registerRevokeKey(app: App, deps: AppDeps): void {
  app.delete(
    '/v1/keys/:key_id',
    {
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke an API key',
        description:
          'Requests with the key fail with 401 within a second, on every instance; dashboard sessions signed in with it end. Revoking a revoked key is a no-op (204).',
        tags: ['Keys'],
        params: KeyIdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await revokeKey({ ctx: contextOf(deps, request), keyId: request.params.key_id });
      return reply.code(204).send(null);
    },
  );
}
