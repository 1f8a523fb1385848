/**
 * The destinations API's shapes (contract §12), declared once: they validate requests, type
 * the handlers and document the routes in OpenAPI.
 */
import { type Static, Type } from '@sinclair/typebox';
import { DESTINATION_STATES } from './model.ts';
import { meta } from './platforms/meta/index.ts';
import { PLATFORM_MODULES, PLATFORMS, PlatformSchema } from './platforms/registry.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const EventNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: 'Event names to forward; every event when omitted or null.',
});

const Sources = Type.Array(Type.Union([Type.Literal('server'), Type.Literal('browser')]), {
  minItems: 1,
  maxItems: 2,
  uniqueItems: true,
  description:
    'Where the events it takes come from: `server` (`/v1/track`), `browser` (`/v1/collect`). Both when omitted or null. Purchases are best taken from the server only.',
});

/**
 * Per type, the `config` it takes: documented as the body's `oneOf`, so OpenAPI and the
 * generated clients type `config` by `type`. The validator does not read `oneOf`: the verb
 * checks `config` against the type's own schema (a union check would answer with the wrong
 * branch's complaint).
 */
const CONFIG_BY_TYPE = PLATFORMS.map((type) => ({
  type: 'object',
  title: `${PLATFORM_MODULES[type].name} destination`,
  properties: {
    type: { const: type, type: 'string' },
    config: PLATFORM_MODULES[type].config.schema,
  },
  required: ['type', 'config'],
}));

/**
 * The first platform's form, filled in: the example of a create body. Its required fields only:
 * a live destination (a `test_event_code` would send every event to Test events only).
 */
const EXAMPLE_TYPE = PLATFORMS[0]!;
const EXAMPLE_CONFIG = Object.fromEntries(
  PLATFORM_MODULES[EXAMPLE_TYPE].config.form
    .filter((f) => !f.optional)
    .map((f) => [f.name, f.placeholder || 'secret']),
);

export const CreateDestinationSchema = Type.Object(
  {
    type: PlatformSchema,
    name: Type.Optional(Name),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "The type's settings, secrets included (write-only); every type also takes `event_names`.",
    }),
    events: Type.Optional(Type.Union([EventNames, Type.Null()])),
    sources: Type.Optional(Type.Union([Sources, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    oneOf: CONFIG_BY_TYPE,
    examples: [
      {
        type: EXAMPLE_TYPE,
        name: `${PLATFORM_MODULES[EXAMPLE_TYPE].name} destination`,
        config: EXAMPLE_CONFIG,
        events: ['Purchase', 'Lead'],
      },
    ],
  },
);
export type CreateDestinationInput = Static<typeof CreateDestinationSchema>;

export const UpdateDestinationSchema = Type.Object(
  {
    name: Type.Optional(Name),
    config: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Fields to change; omitted fields (secrets included) keep their values. New credentials resume a suspended destination.',
        },
      ),
    ),
    events: Type.Optional(Type.Union([EventNames, Type.Null()])),
    sources: Type.Optional(Type.Union([Sources, Type.Null()])),
    enabled: Type.Optional(
      Type.Boolean({ description: '`true` also resumes a suspended destination.' }),
    ),
  },
  { additionalProperties: false, examples: [{ config: { access_token: 'EAAB…new' } }] },
);
export type UpdateDestinationInput = Static<typeof UpdateDestinationSchema>;

export const DestinationSchema = Type.Object(
  {
    id: Type.String({ description: '`dst_` + 16 base62.' }),
    pixel_id: Type.String(),
    type: PlatformSchema,
    name: Type.Union([Type.String(), Type.Null()]),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: 'As sent, with secrets shown as `****` + their last 4 characters.',
    }),
    events: Type.Union([Type.Array(Type.String()), Type.Null()]),
    sources: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: '`server` and/or `browser`; null: both.',
    }),
    enabled: Type.Boolean(),
    state: Type.Union(
      DESTINATION_STATES.map((s) => Type.Literal(s)),
      {
        description:
          '`failing`: recent transient errors; `suspended`: the platform refused the credentials (nothing is sent, events wait).',
      },
    ),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    examples: [
      {
        id: 'dst_4f8Kq2ZxY7mN3pLw',
        pixel_id: 'px_9a8b7c6d5e4f3a2b',
        type: meta.type,
        name: 'Meta pixel',
        config: { pixel_id: '123456789012345', access_token: '****x7Qa' },
        events: null,
        sources: null,
        enabled: true,
        state: 'active',
        last_error: null,
        created_at: '2026-11-25T07:00:00.000Z',
        updated_at: '2026-11-25T07:00:00.000Z',
      },
    ],
  },
);

export const DestinationListSchema = Type.Object({ destinations: Type.Array(DestinationSchema) });

export const DestinationIdParams = Type.Object({
  pixel_id: Type.String({ description: 'Pixel identifier (`px_…`).' }),
  destination_id: Type.String({ description: 'Destination identifier (`dst_…`).' }),
});

export const ReplayDestinationSchema = Type.Object(
  {
    start_date: Type.String({
      format: 'date-or-date-time',
      description: 'Events with `timestamp` from here (a date alone: its whole UTC day).',
    }),
    end_date: Type.String({ format: 'date-or-date-time', description: 'Inclusive.' }),
    statuses: Type.Optional(
      Type.Array(
        Type.Union([
          Type.Literal('failed'),
          Type.Literal('skipped'),
          Type.Literal('forwarded'),
          Type.Literal('pending'),
        ]),
        {
          minItems: 1,
          uniqueItems: true,
          description:
            'Outcomes to send again; default `["failed", "skipped"]`. Events of the range with no job for this destination (stored before it existed) are always queued.',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ start_date: '2026-11-20', end_date: '2026-11-24', statuses: ['failed'] }],
  },
);
export type ReplayDestinationInput = Static<typeof ReplayDestinationSchema>;

export const ReplayResultSchema = Type.Object({
  queued: Type.Integer({
    description:
      'How many events the replay sends: counted when it was accepted, queued in the background (chunks of 500, resumed after a restart).',
  }),
});

export const TestDestinationSchema = Type.Object(
  {
    event: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'The event id of a stored event to send; a sample event when omitted.',
      }),
    ),
  },
  { additionalProperties: false, 'x-optional-body': true, examples: [{ event: 'order-10045' }] },
);

export const TestResultSchema = Type.Object({
  ok: Type.Boolean({ description: 'The platform accepted the event.' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The platform’s HTTP status; null when nothing was sent or no answer came.',
  }),
  platform_response: Type.Unknown({
    description: "The platform's answer (JSON when it is); null when nothing was sent.",
  }),
  payload: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      "The exact body sent, in the platform's test mode; for a platform without one (Microsoft), the body that would be sent, which was not.",
  }),
});
