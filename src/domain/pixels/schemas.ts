import { type Static, Type } from '@sinclair/typebox';

const hostname = (description: string) =>
  Type.String({
    format: 'hostname',
    maxLength: 253,
    errorMessage: 'must be a hostname such as shop.example.com',
    description,
  });

export const CreatePixelSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Display name.' }),
    domain: hostname("The customer's site domain."),
    tracking_domain: Type.Optional(hostname('Domain used for tracking; defaults to `domain`.')),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Shop', domain: 'shop.example.com', tracking_domain: 'track.shop.example.com' },
    ],
  },
);
export type CreatePixelInput = Static<typeof CreatePixelSchema>;

export const UpdatePixelSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    domain: Type.Optional(hostname("The customer's site domain.")),
    tracking_domain: Type.Optional(hostname('Domain used for tracking.')),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('paused')], {
        description: 'A paused pixel refuses new events with 409.',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ status: 'paused' }] },
);
export type UpdatePixelInput = Static<typeof UpdatePixelSchema>;

/** The pixel the API reference shows (its objects, and the webhook payloads that carry one). */
export const PIXEL_EXAMPLE = {
  id: 'px_7Hq2LmN4pR8sT1vW',
  name: 'Shop',
  domain: 'shop.example.com',
  tracking_domain: 'track.shop.example.com',
  status: 'active',
  publishable_key: 'tw_pub_4kTq9ZbW2xLm7RcV1nPs8YdH',
  created_at: '2026-11-01T09:00:00.000Z',
};

export const PixelSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    domain: Type.String(),
    tracking_domain: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    publishable_key: Type.String({
      description:
        'For the browser snippet (`/v1/pixel.js`): sends browser events to this pixel from its own sites, on `POST /v1/collect` only. Not a secret.',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    examples: [PIXEL_EXAMPLE],
  },
);
export type PixelObject = Static<typeof PixelSchema>;

/** `GET /v1/pixels/:pixel_id`: the pixel and its match quality over the last 7 days (§12). */
export const PixelDetailSchema = Type.Object(
  {
    ...PixelSchema.properties,
    match_quality_7d: Type.Union([Type.Number({ minimum: 0, maximum: 10 }), Type.Null()], {
      description:
        "The mean `match_quality.score` of the pixel's events timestamped in the last 7 days (by the hour), or null when there are none. A local estimate, not Meta's Event Match Quality.",
    }),
  },
  {
    examples: [{ ...PIXEL_EXAMPLE, match_quality_7d: 6.4 }],
  },
);
export type PixelDetail = Static<typeof PixelDetailSchema>;

export const PixelListSchema = Type.Object({
  pixels: Type.Array(PixelSchema),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const PageQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Default 50; values above 100 are applied as 100.' }),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Default 0.' })),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuerySchema>;
