/**
 * The bodies Trackway POSTs to webhook endpoints, one schema per kind (contract §6 and §12).
 * They document the OpenAPI `webhooks` section, and through it type `verifyWebhook()` in the
 * client, so a receiver's code is checked against what is actually sent.
 */

import { type TSchema, Type } from '@sinclair/typebox';
import { meta } from '../forwarding/platforms/meta/index.ts';
import { PlatformSchema } from '../forwarding/platforms/registry.ts';
import { PIXEL_EXAMPLE, PixelSchema } from '../pixels/schemas.ts';

const at = '2026-11-24T18:42:11.000Z';

/** The envelope every delivery shares; `data` differs by kind. */
function envelope<K extends string, D extends TSchema>(kind: K, data: D, example: unknown) {
  return Type.Object(
    {
      id: Type.String({ description: 'Message id (`msg_…`), the same on every retry.' }),
      event: Type.Literal(kind),
      data,
      webhook_id: Type.String({ description: 'The endpoint the message was sent to (`wh_…`).' }),
      timestamp: Type.String({
        format: 'date-time',
        description:
          'When the message was first sent (each retry sends the same bytes; the attempt time is in `webhook-timestamp`).',
      }),
    },
    {
      examples: [
        {
          id: 'msg_01JDQ3Z8K4X7V2N9P5R6T8W1Y3',
          event: kind,
          data: example,
          webhook_id: 'wh_3Kd9Fj2Lq8Mz5Np1',
          timestamp: at,
        },
      ],
    },
  );
}

export const EventTrackedWebhookSchema = envelope(
  'event.tracked',
  Type.Object({
    pixel_id: Type.String(),
    event_name: Type.String(),
    event_id: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()]),
    timestamp: Type.String({ format: 'date-time' }),
  }),
  {
    pixel_id: PIXEL_EXAMPLE.id,
    event_name: 'Purchase',
    event_id: 'order-10045',
    value: 49.99,
    timestamp: '2026-11-24T18:42:10.000Z',
  },
);

export const EventForwardedWebhookSchema = envelope(
  'event.forwarded',
  Type.Object({
    pixel_id: Type.String(),
    event_id: Type.String(),
    event_name: Type.String(),
    destination_id: Type.String({ description: 'The destination (`dst_…`).' }),
    platform: PlatformSchema,
    forwarded_at: Type.String({ format: 'date-time' }),
    platform_response: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "What the platform returned that identifies the receipt, e.g. Meta's `fbtrace_id` and `events_received`.",
    }),
  }),
  {
    pixel_id: PIXEL_EXAMPLE.id,
    event_id: 'order-10045',
    event_name: 'Purchase',
    destination_id: 'dst_9Bv4Hc7Jk2Lm5Np8',
    platform: meta.type,
    forwarded_at: at,
    platform_response: { events_received: 1, fbtrace_id: 'AbC123xYz' },
  },
);

export const PixelCreatedWebhookSchema = envelope('pixel.created', PixelSchema, PIXEL_EXAMPLE);

export const PixelUpdatedWebhookSchema = envelope(
  'pixel.updated',
  Type.Composite([
    PixelSchema,
    Type.Object({
      previous_attributes: Type.Record(Type.String(), Type.Unknown(), {
        description: 'The old values of the fields that changed.',
      }),
    }),
  ]),
  { ...PIXEL_EXAMPLE, status: 'paused', previous_attributes: { status: 'active' } },
);

export const SubscriptionUpdatedWebhookSchema = envelope(
  'subscription.updated',
  Type.Object({
    account_id: Type.String(),
    plan: Type.Union(['starter', 'pro', 'ultra', 'enterprise'].map((p) => Type.Literal(p))),
    status: Type.Union(['active', 'past_due', 'canceled'].map((s) => Type.Literal(s))),
    previous_plan: Type.String(),
    limits: Type.Object({
      requests_per_minute: Type.Integer(),
      daily_limit: Type.Integer(),
      pixels: Type.Union([Type.Integer(), Type.Null()], { description: 'null: unlimited.' }),
    }),
  }),
  {
    account_id: 'acct_5Fg8Hj1Kl4Mn7Pq0',
    plan: 'ultra',
    status: 'active',
    previous_plan: 'pro',
    limits: { requests_per_minute: 2000, daily_limit: 2880000, pixels: 50 },
  },
);

/** OpenAPI component name → schema, in the order of WEBHOOK_EVENT_TYPES. */
export const WEBHOOK_PAYLOAD_SCHEMAS = {
  'event.tracked': { name: 'EventTrackedWebhook', schema: EventTrackedWebhookSchema },
  'event.forwarded': { name: 'EventForwardedWebhook', schema: EventForwardedWebhookSchema },
  'pixel.created': { name: 'PixelCreatedWebhook', schema: PixelCreatedWebhookSchema },
  'pixel.updated': { name: 'PixelUpdatedWebhook', schema: PixelUpdatedWebhookSchema },
  'subscription.updated': {
    name: 'SubscriptionUpdatedWebhook',
    schema: SubscriptionUpdatedWebhookSchema,
  },
} as const;
