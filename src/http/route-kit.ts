/**
 * What every route file shares: the error shape for OpenAPI, schema validation, and the
 * request → Context step.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { checkDestination, type DestinationPolicy } from '../delivery/ssrf.ts';
import type { Context } from '../domain/context.ts';
import type { DestinationCheck } from '../domain/ports/destination-check.ts';
import { compileValidator } from '../domain/validation.ts';
import type { WebhookContext } from '../domain/webhooks/endpoints.ts';
import type { AppDeps } from './deps.ts';

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

/** The query string of a route that takes no parameters: any parameter is unknown. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false });

/** The body of a route that takes none, when one is sent anyway: any field is unknown. */
export const NoBodySchema = Type.Object({}, { additionalProperties: false });

/** Fastify's `{ value } | { error }` shape around a validator that throws. */
function asFastifyValidator(validate: (data: unknown) => unknown) {
  return (data: unknown) => {
    try {
      return { value: validate(data) };
    } catch (error) {
      return { error: error as Error };
    }
  };
}

/**
 * Every schema a route declares (body, query string, path parameters) is enforced with the
 * same validator (domain/validation.ts), so what is documented is what is enforced.
 */
export const compileSchemaValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const validate = compileValidator(schema, {
    noun: httpPart === 'querystring' ? 'parameter' : 'field',
    coerce: httpPart === 'querystring' || httpPart === 'params',
  });
  // A body marked optional may be left out entirely (e.g. POST …/test with no body).
  const optional = (schema as Record<string, unknown>)['x-optional-body'] === true;
  return asFastifyValidator((data) =>
    optional && (data === null || data === undefined) ? undefined : validate(data),
  );
};

/**
 * For a route whose body its verb validates (the track routes: format checks the schema
 * cannot express come before unknown fields, and a batch answers each event in its slot):
 * the body goes through `validateBody` (the identity when left out), every other part as usual.
 * The body schema still types the handler and documents the route.
 */
export function bodyValidatedBy<S>(
  validateBody: (body: unknown) => unknown = (body) => body,
): FastifySchemaCompiler<S> {
  return (route) =>
    route.httpPart === 'body'
      ? asFastifyValidator(validateBody)
      : compileSchemaValidator(route as unknown as FastifyRouteSchemaDef<TSchema>);
}

export const PixelIdParams = Type.Object({
  pixel_id: Type.String({ description: 'Pixel identifier (`px_…`).' }),
});

export function contextOf(deps: AppDeps, request: FastifyRequest): Context {
  const ctx: Context = { store: deps.store, clock: deps.clock, account: request.account };
  if (deps.pixelForTracking) ctx.pixelForTracking = deps.pixelForTracking;
  const metrics = deps.metrics;
  if (metrics) {
    ctx.droppedValues = (fields) => {
      // `user_data.phone` → field="phone": the label's values are the fixed key names only.
      for (const field of fields)
        metrics.userDataDropped.inc({ field: field.replace(/^user_data\./, '') });
    };
  }
  return ctx;
}

const destinationCheck = (policy: DestinationPolicy): DestinationCheck => ({
  check: (url) => checkDestination(url, policy),
});

/** Webhook destinations as the configuration allows them (SSRF rules, contract §6). */
export function webhookDestinations(deps: AppDeps): DestinationCheck {
  return destinationCheck({
    allowPrivate: deps.config.webhookAllowPrivate,
    allowHttp: deps.config.webhookAllowHttp,
  });
}

export function webhookContextOf(deps: AppDeps, request: FastifyRequest): WebhookContext {
  return { ...contextOf(deps, request), destinations: webhookDestinations(deps) };
}
