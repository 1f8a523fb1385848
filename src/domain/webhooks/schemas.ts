import { type Static, Type } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES } from '../model.ts';

const EventType = Type.Union(
  WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'A webhook event kind.' },
);

const EventList = Type.Array(EventType, {
  minItems: 1,
  uniqueItems: true,
  description: 'Event kinds to receive; all five when omitted.',
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where deliveries are POSTed: https, public addresses only.',
});

const Description = Type.String({ maxLength: 500 });

export const CreateWebhookSchema = Type.Object(
  { url: Url, events: Type.Optional(EventList), description: Type.Optional(Description) },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://hooks.example.com/trackway',
        events: ['event.tracked', 'pixel.updated'],
        description: 'Order pipeline',
      },
    ],
  },
);
export type CreateWebhookInput = Static<typeof CreateWebhookSchema>;

export const UpdateWebhookSchema = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventList),
    description: Type.Optional(Description),
    enabled: Type.Optional(
      Type.Boolean({ description: 'Re-enabling also resumes deliveries queued meanwhile.' }),
    ),
  },
  { additionalProperties: false, examples: [{ enabled: true }] },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookSchema>;

export const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  previous_secret_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'After a rotation: when the old secret stops signing (null when no old secret signs).',
  }),
});

export const WebhookWithSecretSchema = Type.Composite([
  WebhookSchema,
  Type.Object({
    secret: Type.String({ description: 'Signing secret (`whsec_…`). Shown only here.' }),
  }),
]);

export const WebhookListSchema = Type.Object({ webhooks: Type.Array(WebhookSchema) });

export const TestWebhookSchema = Type.Object(
  { event: Type.Optional(EventType) },
  { additionalProperties: false, examples: [{ event: 'pixel.updated' }] },
);
export type TestWebhookInput = Static<typeof TestWebhookSchema>;

export const DeliverySchema = Type.Object({
  id: Type.String({ description: 'Attempt id.' }),
  message_id: Type.String(),
  event: Type.String(),
  attempt: Type.Integer({ description: 'Counts from 1.' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('pending')]),
  response_status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], {
    description: 'The first 1 KB of the response.',
  }),
  attempted_at: Type.String({ format: 'date-time' }),
});

export const DeliveryListSchema = Type.Object({
  deliveries: Type.Array(DeliverySchema),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const WebhookIdParams = Type.Object({ webhook_id: Type.String() });
export const DeliveryParams = Type.Object({ webhook_id: Type.String(), message_id: Type.String() });
