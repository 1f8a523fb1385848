/**
 * `POST /v1/collect`'s shapes, declared once: the body a browser sends (validated after the
 * fields this version does not know are dropped) and the answer.
 */
import { type Static, Type } from '@sinclair/typebox';
// One consent schema for server and browser events (contract §16, §17).
import { ConsentSchema } from '../consent.ts';

/** Click ids a landing URL may carry, as the platforms name their query parameters. */
export const CLICK_ID_PARAMS = [
  'fbclid',
  'gclid',
  'gbraid',
  'wbraid',
  'ttclid',
  'msclkid',
  'ScCid',
  'epik',
  'rdt_cid',
  'li_fat_id',
] as const;
export type ClickIdParam = (typeof CLICK_ID_PARAMS)[number];

/** The platforms' first-party cookies the snippet reads (plus GA4's `_ga_<container>`). */
export const PLATFORM_COOKIES = [
  '_fbp',
  '_fbc',
  '_ttp',
  '_ga',
  '_gcl_aw',
  '_scid',
  '_epik',
  '_rdt_uuid',
  '_uetvid',
  '_uetmsclkid',
  'li_fat_id',
] as const;

/** GA4's per-container session cookie, `_ga_<measurement id without G->`. */
export const GA_CONTAINER_COOKIE = /^_ga_[A-Za-z0-9]{1,32}$/;

/** Longest click id or cookie value kept: longer ones are no platform's and are dropped. */
export const MAX_IDENTIFIER_LENGTH = 512;

const identifier = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH, description }));

export const CollectSchema = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The pixel's publishable key (`tw_pub_…`).",
    }),
    event_name: Type.String({ minLength: 1, maxLength: 100 }),
    event_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        format: 'printable',
        errorMessage: 'must be 1 to 128 printable characters',
        description:
          'The snippet makes one (and `trackway("track", …)` returns it) so the site can hand it to the platforms\' own browser tags for their deduplication.',
      }),
    ),
    url: Type.String({
      format: 'http-url',
      maxLength: 2048,
      errorMessage: 'must be an absolute http(s) URL',
      description: 'The page the event happened on.',
    }),
    referrer: Type.Optional(
      Type.String({ maxLength: 2048, description: 'Kept only when an absolute http(s) URL.' }),
    ),
    title: Type.Optional(Type.String({ maxLength: 2048 })),
    value: Type.Optional(Type.Number({ errorMessage: 'must be a finite number' })),
    currency: Type.Optional(
      Type.String({ format: 'iso4217', errorMessage: 'must be an ISO 4217 currency code' }),
    ),
    custom_data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 })),
    consent: Type.Optional(ConsentSchema),
    anonymous_id: Type.String({
      minLength: 1,
      maxLength: 128,
      format: 'printable',
      errorMessage: 'must be 1 to 128 printable characters',
      description:
        "The visitor's id, made by the snippet and kept in the `_tw_id` cookie: a server event carrying it gets this visitor's browser identifiers.",
    }),
    ids: Type.Optional(
      Type.Object(
        Object.fromEntries(CLICK_ID_PARAMS.map((p) => [p, identifier(`\`${p}\` from the URL.`)])),
        {
          additionalProperties: false,
          description: 'Click ids read from the landing URL (kept 90 days by the snippet).',
        },
      ),
    ),
    cookies: Type.Optional(
      Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH }), {
        description: `The platforms' first-party cookies: ${PLATFORM_COOKIES.map((c) => `\`${c}\``).join(', ')} and \`_ga_<container>\`. Others are dropped.`,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Fields this version does not know (`user_data` included: contact data comes only from servers) are dropped and counted, not refused: pages run old snippets for years.',
    examples: [
      {
        key: 'tw_pub_4kTq9ZbW2xLm7RcV1nPs8YdH',
        event_name: 'PageView',
        event_id: 'b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        url: 'https://shop.example.com/?fbclid=IwAR2xYz',
        title: 'Shop',
        anonymous_id: 'tw.1732473730000.k3J9xQ2m',
        ids: { fbclid: 'IwAR2xYz' },
        cookies: { _fbp: 'fb.1.1732473730000.1098115397' },
      },
    ],
  },
);
export type CollectInput = Static<typeof CollectSchema>;

export const CollectResponseSchema = Type.Object(
  { event_id: Type.String({ description: 'The event id used (the one sent, or a new one).' }) },
  { examples: [{ event_id: 'b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d' }] },
);
export type CollectResponse = Static<typeof CollectResponseSchema>;
