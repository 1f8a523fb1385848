/** What every route file shares: the error shape for OpenAPI and the request → Context step. */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Context } from '../domain/context.ts';
import type { WebhookContext } from '../domain/webhooks/endpoints.ts';
import type { AppDeps } from './app.ts';

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'Short name, e.g. `Invalid request`.' }),
    message: Type.String({
      description: 'What went wrong, e.g. `Missing required field: pixel_id`.',
    }),
    field: Type.Optional(Type.String({ description: 'The field at fault, when there is one.' })),
    retry_after: Type.Optional(Type.Integer({ description: 'Seconds to wait (429 only).' })),
  },
  { $id: 'Error' },
);

export const errorResponses = {
  400: ErrorSchema,
  401: ErrorSchema,
  403: ErrorSchema,
  404: ErrorSchema,
  429: ErrorSchema,
};

export const PixelIdParams = Type.Object({
  pixel_id: Type.String({ description: 'Pixel identifier (`px_…`).' }),
});

export function contextOf(deps: AppDeps, request: FastifyRequest): Context {
  return { store: deps.store, clock: deps.clock, account: request.account };
}

export function webhookContextOf(deps: AppDeps, request: FastifyRequest): WebhookContext {
  return {
    ...contextOf(deps, request),
    destinations: {
      allowPrivate: deps.config.webhookAllowPrivate,
      allowHttp: deps.config.webhookAllowHttp,
    },
  };
}
