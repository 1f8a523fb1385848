/**
 * What turns the route schemas into an OpenAPI document that generators and reference pages
 * work well with. @fastify/swagger inlines every schema; this pass (its `transformObject`) gives
 * the shared shapes names under `components`, documents the headers and error responses every
 * route shares, and adds the webhook payloads. The routes still declare each schema once.
 *
 * Named schemas are found by structure: a schema anywhere in the document that equals a
 * registered one (ignoring `examples`, which the plugin moves to the media type) becomes a
 * `$ref`. An inline 2xx body that matches none is named after its operation, so a new route
 * never leaks an anonymous object into generated clients.
 */
import type { TSchema } from '@sinclair/typebox';
import {
  EventListSchema,
  EventRecordSchema,
  TrackBatchResponseSchema,
  TrackBatchResultSchema,
  TrackBatchSchema,
  TrackEventResponseSchema,
  TrackEventSchema,
  UserDataSchema,
} from '../domain/events/schemas.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/model.ts';
import {
  CreatePixelSchema,
  PixelListSchema,
  PixelSchema,
  UpdatePixelSchema,
} from '../domain/pixels/schemas.ts';
import { WEBHOOK_PAYLOAD_SCHEMAS } from '../domain/webhooks/payload-schemas.ts';
import {
  CreateWebhookSchema,
  DeliveryListSchema,
  DeliverySchema,
  TestWebhookSchema,
  UpdateWebhookSchema,
  WebhookListSchema,
  WebhookSchema,
  WebhookWithSecretSchema,
} from '../domain/webhooks/schemas.ts';
import { ErrorSchema } from './route-kit.ts';

type Json = Record<string, unknown>;

/** Component name → schema. Order matters only for readability of the document. */
const NAMED_SCHEMAS: Record<string, TSchema> = {
  TrackEvent: TrackEventSchema,
  UserData: UserDataSchema,
  TrackEventResponse: TrackEventResponseSchema,
  TrackBatchRequest: TrackBatchSchema,
  TrackBatchResult: TrackBatchResultSchema,
  TrackBatchResponse: TrackBatchResponseSchema,
  EventRecord: EventRecordSchema,
  EventList: EventListSchema,
  CreatePixelRequest: CreatePixelSchema,
  UpdatePixelRequest: UpdatePixelSchema,
  Pixel: PixelSchema,
  PixelList: PixelListSchema,
  CreateWebhookRequest: CreateWebhookSchema,
  UpdateWebhookRequest: UpdateWebhookSchema,
  Webhook: WebhookSchema,
  WebhookWithSecret: WebhookWithSecretSchema,
  WebhookList: WebhookListSchema,
  TestWebhookRequest: TestWebhookSchema,
  Delivery: DeliverySchema,
  DeliveryList: DeliveryListSchema,
  Error: ErrorSchema,
  ...Object.fromEntries(
    Object.values(WEBHOOK_PAYLOAD_SCHEMAS).map(({ name, schema }) => [name, schema]),
  ),
};

const ERROR_RESPONSES: Record<string, { name: string; description: string; example: Json }> = {
  '400': {
    name: 'BadRequest',
    description: 'Invalid request: the first problem found, with `field` when one is at fault.',
    example: {
      error: 'Invalid request',
      message: 'Missing required field: pixel_id',
      field: 'pixel_id',
    },
  },
  '401': {
    name: 'Unauthorized',
    description: 'The API key is missing, malformed, unknown or revoked.',
    example: { error: 'Unauthorized', message: 'Invalid API key' },
  },
  '403': {
    name: 'Forbidden',
    description:
      'The plan has no API access, the subscription is not active, or a plan limit would be exceeded.',
    example: {
      error: 'Forbidden',
      message: 'Subscription limit exceeded: plan pro allows 10 pixels',
    },
  },
  '404': {
    name: 'NotFound',
    description: 'No such object in this account (another account’s objects are not found too).',
    example: { error: 'Not found', message: 'Pixel not found: px_7Hq2LmN4pR8sT1vW' },
  },
  '409': {
    name: 'Conflict',
    description: 'The object is in a state that refuses the request (e.g. a paused pixel).',
    example: { error: 'Conflict', message: 'Pixel is paused: px_7Hq2LmN4pR8sT1vW' },
  },
  '413': {
    name: 'PayloadTooLarge',
    description: 'The body exceeds the route’s limit (32,768 bytes; 524,288 for a batch).',
    example: { error: 'Payload too large', message: 'Request body exceeds 32768 bytes' },
  },
  '415': {
    name: 'UnsupportedMediaType',
    description: 'The body is not `application/json`.',
    example: { error: 'Unsupported media type', message: 'Content-Type must be application/json' },
  },
  '429': {
    name: 'RateLimited',
    description:
      'The account’s per-minute or daily limit is reached (or too many failed authentications from this IP). Wait `retry_after` seconds.',
    example: { error: 'Rate limit exceeded', message: 'Rate limit exceeded', retry_after: 17 },
  },
  '500': {
    name: 'InternalError',
    description: 'An unexpected failure. Nothing was acknowledged; retrying is safe.',
    example: { error: 'Internal server error', message: 'Internal server error' },
  },
  '503': {
    name: 'ServiceUnavailable',
    description:
      'Storage is unreachable, or (`POST /v1/track/batch`) too many of the account’s batches are in progress. Nothing was acknowledged; retry with backoff, after `Retry-After` when the answer has it.',
    example: { error: 'Service unavailable', message: 'Storage is not reachable' },
  },
};

const RATE_LIMIT_HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit': {
    description:
      'Requests allowed in the binding window (the minute, or the day when it has less room).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the binding window.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'When the binding window resets, in Unix epoch seconds.',
    schema: { type: 'integer' },
  },
  'RateLimit-Policy': {
    description: 'IETF draft header: the minute and day quotas, e.g. `"minute";q=500;w=60, …`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'IETF draft header: what is left of each window and the seconds to its reset.',
    schema: { type: 'string' },
  },
};

const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before retrying (equals the body’s `retry_after`).',
  schema: { type: 'integer', minimum: 1 },
};

const WEBHOOK_HEADERS: Json[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: the message id, the same on every retry.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: Unix seconds of this attempt. Refuse messages more than 5 minutes away from now.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64 after `whsec_`. Two entries while a rotated secret overlaps.',
    schema: { type: 'string' },
  },
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description:
      '`sha256=` + hex HMAC-SHA256 of the exact body bytes, keyed with the whole secret string. Carries no timestamp: prefer `webhook-signature`.',
    schema: { type: 'string' },
  },
];

const TAGS = [
  { name: 'Events', description: 'Send events and read them back.' },
  { name: 'Pixels', description: 'The pixels events belong to.' },
  { name: 'Webhooks', description: 'Endpoints that receive signed notifications.' },
  {
    name: 'Destinations',
    description: "Ad platforms a pixel's events are forwarded to (Meta Conversions API).",
  },
  {
    name: 'Browser',
    description:
      "First-party browser collection: the snippet and the route it sends to, authenticated by a pixel's publishable key from the pixel's own sites.",
  },
  { name: 'Health', description: 'Liveness and readiness, without an API key.' },
];

/** The fixed parts of the document; @fastify/swagger adds `paths`. */
export const OPENAPI_BASE = {
  openapi: '3.1.0',
  info: {
    title: 'Trackway API',
    version: '1.0.0',
    description:
      'Server-side event tracking: send conversion events, read them back, and receive signed webhooks.',
    license: { name: 'Apache 2.0', identifier: 'Apache-2.0' },
  },
  servers: [
    {
      url: 'http://127.0.0.1:8080',
      description: 'A local `trackway serve` (default HOST and PORT)',
    },
  ],
  tags: TAGS,
  components: {
    securitySchemes: {
      apiKey: { type: 'http' as const, scheme: 'bearer', description: 'tw_live_… API key' },
    },
  },
  security: [{ apiKey: [] }],
};

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON copy of a schema in the document's dialect: non-standard keywords renamed to `x-`
 * extensions, and TypeBox's and the plugin's spellings of the same thing made one (a record is
 * `additionalProperties`, a single-value `enum` is `const`), so a registered schema and the
 * plugin's copy of it compare equal.
 */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$id') continue;
    if (key === 'patternProperties' && isObject(v) && Object.keys(v).join() === '^(.*)$') {
      out['additionalProperties'] = clean(v['^(.*)$']);
    } else if (key === 'enum' && Array.isArray(v) && v.length === 1) {
      out['const'] = v[0];
    } else {
      out[key === 'errorMessage' ? 'x-error-message' : key] = clean(v);
    }
  }
  return out;
}

/** Key-sorted serialisation, blind to `examples` and descriptions' placement. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  const keys = Object.keys(value)
    .filter((k) => k !== 'examples' && k !== 'example' && value[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

class SchemaNamer {
  private readonly byShape = new Map<string, string>();
  readonly components: Record<string, unknown> = {};

  constructor(named: Record<string, TSchema>) {
    const cleaned = Object.entries(named).map(([name, schema]) => [name, clean(schema)] as const);
    for (const [name, schema] of cleaned) this.byShape.set(canonical(schema), name);
    for (const [name, schema] of cleaned) this.components[name] = this.refsInside(schema);
  }

  /** The schema as a `$ref` when its shape is named, else with named parts inside replaced. */
  replace(schema: unknown): unknown {
    const cleaned = clean(schema);
    const name = this.byShape.get(canonical(cleaned));
    return name ? schemaRef(name) : this.refsInside(cleaned);
  }

  /** Names a shape after `name` unless it already has one; returns the `$ref`. */
  nameAs(name: string, schema: unknown): unknown {
    const replaced = this.replace(schema);
    if (isObject(replaced) && '$ref' in replaced) return replaced;
    this.byShape.set(canonical(clean(schema)), name);
    this.components[name] = replaced;
    return schemaRef(name);
  }

  exampleOf(ref: unknown): unknown {
    if (!isObject(ref) || typeof ref['$ref'] !== 'string') return undefined;
    const component = this.components[ref['$ref'].replace('#/components/schemas/', '')];
    return isObject(component) && Array.isArray(component['examples'])
      ? component['examples'][0]
      : undefined;
  }

  private refsInside(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.replace(s));
    if (!isObject(schema)) return schema;
    const out: Json = {};
    for (const [key, v] of Object.entries(schema)) {
      if (key === 'properties' && isObject(v)) {
        out[key] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, this.replace(s)]));
      } else if (['items', 'additionalProperties', 'not'].includes(key) && isObject(v)) {
        out[key] = this.replace(v);
      } else if (['anyOf', 'oneOf', 'allOf', 'prefixItems'].includes(key) && Array.isArray(v)) {
        out[key] = v.map((s) => this.replace(s));
      } else {
        out[key] = v;
      }
    }
    return out;
  }
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

/** The `transformObject` of @fastify/swagger: see the file's header. */
export function finishOpenApiDocument(document: Json): Json {
  const namer = new SchemaNamer(NAMED_SCHEMAS);
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) finishOperation(namer, `${method.toUpperCase()} ${path}`, operation);
    }
  }

  const components = (document['components'] ?? {}) as Json;
  const responses: Json = {};
  for (const { name, description, example } of Object.values(ERROR_RESPONSES)) {
    responses[name] = {
      description,
      ...(name === 'RateLimited'
        ? {
            headers: {
              'Retry-After': { $ref: '#/components/headers/Retry-After' },
              ...rateLimitHeaderRefs(),
            },
          }
        : {}),
      content: { 'application/json': { schema: schemaRef('Error'), example } },
    };
  }
  const webhooks: Json = {};
  for (const kind of WEBHOOK_EVENT_TYPES) {
    const { name } = WEBHOOK_PAYLOAD_SCHEMAS[kind];
    const ref = schemaRef(name);
    webhooks[kind] = {
      post: {
        // `receive…`: generated clients tell these apart from the API's own operations.
        operationId: `receive${kind.replace(/(^|\.)(\w)/g, (_, _dot: string, c: string) => c.toUpperCase())}`,
        summary: `\`${kind}\` delivery`,
        description:
          'POSTed to each enabled endpoint subscribed to this kind. Verify the signature over the raw body before parsing it (the Node client’s `verifyWebhook()` does, with replay protection); deduplicate on `id`. Delivery is at least once, in no guaranteed order.',
        tags: ['Webhook payloads'],
        security: [],
        parameters: WEBHOOK_HEADERS,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref, example: namer.exampleOf(ref) } },
        },
        responses: {
          '2XX': { description: 'Any 2xx within 15 seconds acknowledges the message.' },
          '410': { description: 'Gone: the endpoint is disabled and nothing more is sent.' },
        },
      },
    };
  }
  return {
    ...document,
    tags: [...TAGS, { name: 'Webhook payloads', description: 'What Trackway sends to endpoints.' }],
    components: {
      ...components,
      schemas: { ...((components['schemas'] as Json | undefined) ?? {}), ...namer.components },
      responses,
      headers: { ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER_HEADER },
    },
    webhooks,
  };
}

function rateLimitHeaderRefs(): Json {
  return Object.fromEntries(
    Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]),
  );
}

function finishOperation(namer: SchemaNamer, where: string, operation: Json): void {
  const operationId = operation['operationId'];
  // Generated clients name their methods after these: a route without one is a bug here.
  if (typeof operationId !== 'string') throw new Error(`${where} has no operationId`);
  // `collectEvent` carries its key (a publishable one) in the body, where OpenAPI cannot
  // declare it, but counts against the account's limits like every keyed route.
  const authenticated =
    !Array.isArray(operation['security']) ||
    operation['security'].length > 0 ||
    operationId === 'collectEvent';
  if (Array.isArray(operation['parameters'])) {
    operation['parameters'] = operation['parameters'].map((parameter: Json) => ({
      ...parameter,
      schema: clean(parameter['schema']),
    }));
  }

  const body = operation['requestBody'] as Json | undefined;
  const bodyMedia = (body?.['content'] as Record<string, Json> | undefined)?.['application/json'];
  if (body && bodyMedia) {
    const optional = isObject(bodyMedia['schema']) && bodyMedia['schema']['x-optional-body'];
    const { 'x-optional-body': _marker, ...schema } = bodyMedia['schema'] as Json;
    bodyMedia['schema'] = namer.nameAs(`${capitalise(operationId)}Request`, schema);
    bodyMedia['example'] ??= namer.exampleOf(bodyMedia['schema']);
    if (bodyMedia['example'] === undefined) delete bodyMedia['example'];
    if (optional) body['required'] = false;
  }

  const responses = (operation['responses'] ?? {}) as Record<string, Json>;
  for (const [status, response] of Object.entries(responses)) {
    if (status.startsWith('2')) {
      const media = (response['content'] as Record<string, Json> | undefined)?.['application/json'];
      if (media)
        media['schema'] = namer.nameAs(`${capitalise(operationId)}Response`, media['schema']);
      response['description'] =
        response['description'] === 'Default Response' ? 'OK' : response['description'];
      if (authenticated) response['headers'] = rateLimitHeaderRefs();
    }
  }
  const errors = Object.keys(responses).filter((s) => !s.startsWith('2'));
  const wanted = new Set([...errors, '500', '503']);
  if (authenticated) for (const s of ['401', '403', '429']) wanted.add(s);
  for (const status of [...wanted].sort()) {
    const known = ERROR_RESPONSES[status];
    if (!known) throw new Error(`${where}: no shared response for ${status}`);
    responses[status] = { $ref: `#/components/responses/${known.name}` };
  }
  // Status order, successes first, as readers expect.
  operation['responses'] = Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
  );
}
