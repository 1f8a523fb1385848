/**
 * The request and response shapes of the event operations, declared once: they validate input
 * (validation.ts), type the verbs and generate the OpenAPI document.
 */

import { type Static, Type } from '@sinclair/typebox';
import { ConsentSchema } from '../consent.ts';
import { ForwardingEntrySchema } from '../forwarding/forwarding-record.ts';
import {
  ACTION_SOURCES,
  ActionSourceSchema,
  MATCH_KEY_USER_DATA_PROPERTIES,
} from '../forwarding/match-keys.ts';
import { ga4 } from '../forwarding/platforms/ga4/index.ts';
import { meta } from '../forwarding/platforms/meta/index.ts';
import { PlatformSchema } from '../forwarding/platforms/registry.ts';

/** A realistic event: the docs page's "try it" sends this (with your pixel's id). */
const TRACK_EVENT_EXAMPLE = {
  pixel_id: 'px_7Hq2LmN4pR8sT1vW',
  event_name: 'Purchase',
  event_id: 'order-10045',
  value: 49.99,
  currency: 'USD',
  timestamp: '2026-11-24T18:42:10Z',
  url: 'https://shop.example.com/checkout/thank-you',
  action_source: 'website',
  consent: { ad_user_data: 'granted', ad_personalization: 'granted' },
  user_data: {
    email: 'jane@example.com',
    phone: '+1 650 555 1212',
    country: 'US',
    client_ip_address: '203.0.113.7',
    client_user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)',
    fbp: 'fb.1.1732473730000.1098115397',
  },
  custom_data: { order_id: '10045', items: 2 },
};

const userDataValue = (description: string) =>
  Type.Optional(Type.String({ maxLength: 256, description }));

export const UserDataSchema = Type.Object(
  {
    email: userDataValue('Email address. Normalised (trimmed, lower-cased) and SHA-256-hashed.'),
    phone: userDataValue(
      'Phone number in E.164 format (`+16505551212`; spaces, dashes, dots and parentheses are ignored). Hashed as digits without `+`.',
    ),
    first_name: userDataValue('First name. Lower-cased, punctuation removed, then hashed.'),
    last_name: userDataValue('Last name. Lower-cased, punctuation removed, then hashed.'),
    city: userDataValue('City. Lower-cased, spaces and punctuation removed, then hashed.'),
    state: userDataValue('State or province code. Lower-cased, then hashed.'),
    zip: userDataValue(
      'Postal code. Lower-cased without spaces (US: first 5 digits), then hashed.',
    ),
    country: userDataValue('ISO 3166-1 alpha-2 country code. Lower-cased, then hashed.'),
    external_id: userDataValue('Your internal user ID. Trimmed, then hashed.'),
    // Contract §11: the keys ad platforms want unhashed, declared once in match-keys.ts.
    ...MATCH_KEY_USER_DATA_PROPERTIES,
  },
  {
    additionalProperties: false,
    description:
      "User attributes for matching. Every value is normalised and SHA-256-hashed before it is stored; a value that already is 64 lowercase hex characters is taken as a hash and kept as sent. The match keys (`client_ip_address`, `client_user_agent`, `fbc`, `fbp`, `ttclid`, `ttp`, `ga_client_id`, `ga_session_id`, and the click ids and cookies `gclid`, `gbraid`, `wbraid`, `epik`, `ScCid`, `_scid`, `rdt_cid`, `_rdt_uuid`, `msclkid`, `_uetvid`, `li_fat_id`) are hashed as sent in the record; their raw values are kept apart, only for forwarding, for at most 7 days after the event's `timestamp`. A string that fails its format check (a phone not in E.164, a country not alpha-2, an email without `@`, a value too long …) does not fail the event: it is left out, the answer's `warnings` says why, and the record lists it in `dropped`. A value that is not a string, or an unknown key, is still a 400.",
  },
);

const httpUrl = (description: string) =>
  Type.Optional(
    Type.String({
      format: 'http-url',
      maxLength: 2048,
      errorMessage: 'must be an absolute http(s) URL',
      description,
    }),
  );

export const TrackEventSchema = Type.Object(
  {
    pixel_id: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The pixel the event belongs to.',
    }),
    event_name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A standard event name (`Purchase`, `Lead`, …) or any custom name.',
    }),
    event_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        format: 'printable',
        errorMessage: 'must be 1 to 128 printable characters',
        description:
          'Your unique ID for the event. A repeat of `(pixel_id, event_id)` is deduplicated: the first event is kept.',
      }),
    ),
    value: Type.Optional(Type.Number({ errorMessage: 'must be a finite number' })),
    currency: Type.Optional(
      Type.String({
        format: 'iso4217',
        errorMessage: 'must be an ISO 4217 currency code',
        description: 'ISO 4217 code, any case; stored upper-case.',
      }),
    ),
    action_source: ActionSourceSchema,
    consent: Type.Optional(ConsentSchema),
    user_data: Type.Optional(UserDataSchema),
    timestamp: Type.Optional(
      Type.String({
        format: 'date-time',
        errorMessage: 'must be an ISO 8601 date-time with an offset (Z or ±hh:mm)',
        description:
          'When the event happened; defaults to the time of receipt. At most 10 minutes in the future.',
      }),
    ),
    url: httpUrl('Page URL where the event occurred.'),
    referrer: httpUrl('Referrer URL.'),
    title: Type.Optional(Type.String({ maxLength: 2048, description: 'Page title.' })),
    search_string: Type.Optional(
      Type.String({ maxLength: 2048, description: 'Search query (for `Search`).' }),
    ),
    custom_data: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        maxProperties: 100,
        description: 'Free-form name/value pairs: at most 100 keys and 16,384 bytes serialised.',
      }),
    ),
    anonymous_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        format: 'printable',
        errorMessage: 'must be 1 to 128 printable characters',
        description:
          "The visitor's browser id (the `_tw_id` cookie the snippet sets): every match key the event lacks is filled from that visitor's latest browser events (kept 7 days), before hashing and forwarding; the event's own values win. `match_quality.enriched` lists what was filled.",
      }),
    ),
  },
  { additionalProperties: false, examples: [TRACK_EVENT_EXAMPLE] },
);
export type TrackEventInput = Static<typeof TrackEventSchema>;

/** The `warnings` of a track answer: the event was stored, but not quite as sent. */
const WARNINGS_DESCRIPTION =
  'Present when the event was accepted with something to fix: a near-miss standard event name (`purchase`), or a `user_data` value that could not be used and was left out (`user_data.phone dropped: must be in E.164 format`; the record lists it in `dropped`).';

export const TrackEventResponseSchema = Type.Object(
  {
    success: Type.Boolean(),
    event_id: Type.String(),
    message: Type.String(),
    deduplicated: Type.Optional(Type.Boolean()),
    warnings: Type.Optional(Type.Array(Type.String(), { description: WARNINGS_DESCRIPTION })),
  },
  { examples: [{ success: true, event_id: 'order-10045', message: 'Event tracked' }] },
);
export type TrackEventResponse = Static<typeof TrackEventResponseSchema>;

/** Most events one `POST /v1/track/batch` carries. */
export const MAX_BATCH_EVENTS = 1_000;

export const TrackBatchSchema = Type.Object(
  {
    events: Type.Array(TrackEventSchema, {
      minItems: 1,
      maxItems: MAX_BATCH_EVENTS,
      description:
        '1 to 1,000 events, each exactly as `POST /v1/track` takes it. Each is validated on its own: an invalid event is reported in its slot of `results` and does not stop the others.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        events: [
          TRACK_EVENT_EXAMPLE,
          { pixel_id: TRACK_EVENT_EXAMPLE.pixel_id, event_name: 'PageView', event_id: 'pv-88412' },
        ],
      },
    ],
  },
);

/**
 * One slot per event, in request order. `status` is what `POST /v1/track` would have answered
 * for that event alone; the other fields are that answer's body (success or error).
 */
export const TrackBatchResultSchema = Type.Object({
  index: Type.Integer({ description: 'Position of the event in `events`, from 0.' }),
  status: Type.Integer({
    description:
      'The status the event alone would have got: 200 (tracked or deduplicated), 400, 404, 409, or 500 or 503 (not stored; safe to retry). When storage is unavailable for the whole batch, the response itself is a 503.',
  }),
  success: Type.Optional(Type.Boolean({ description: 'Present (true) when status is 200.' })),
  event_id: Type.Optional(Type.String()),
  message: Type.String(),
  deduplicated: Type.Optional(Type.Boolean()),
  warnings: Type.Optional(Type.Array(Type.String(), { description: WARNINGS_DESCRIPTION })),
  error: Type.Optional(Type.String({ description: 'Present when status is not 200.' })),
  field: Type.Optional(Type.String()),
});
export type TrackBatchResult = Static<typeof TrackBatchResultSchema>;

export const TrackBatchResponseSchema = Type.Object(
  {
    accepted: Type.Integer({ description: 'Events newly stored (each emits `event.tracked`).' }),
    deduplicated: Type.Integer({ description: 'Events whose `event_id` was already stored.' }),
    rejected: Type.Integer({ description: 'Events not stored: status 400, 404, 409 or 500.' }),
    results: Type.Array(TrackBatchResultSchema),
  },
  {
    examples: [
      {
        accepted: 1,
        deduplicated: 0,
        rejected: 1,
        results: [
          {
            index: 0,
            status: 200,
            success: true,
            event_id: 'order-10045',
            message: 'Event tracked',
          },
          {
            index: 1,
            status: 400,
            error: 'Invalid request',
            message: 'Invalid field: value must be a finite number',
            field: 'value',
          },
        ],
      },
    ],
  },
);
export type TrackBatchResponse = Static<typeof TrackBatchResponseSchema>;

export const ListEventsQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Default 50; values above 100 are applied as 100.' }),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Default 0.' })),
    event_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    start_date: Type.Optional(
      Type.String({
        format: 'date-or-date-time',
        errorMessage: 'must be an ISO 8601 date or date-time',
        description: 'Inclusive. A date alone means the start of that UTC day.',
      }),
    ),
    end_date: Type.Optional(
      Type.String({
        format: 'date-or-date-time',
        errorMessage: 'must be an ISO 8601 date or date-time',
        description: 'Inclusive. A date alone means the end of that UTC day.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuerySchema>;

export const MatchQualitySchema = Type.Object(
  {
    score: Type.Number({ minimum: 0, maximum: 10, description: '0–10, one decimal.' }),
    keys: Type.Array(Type.String(), { description: 'The match keys present, strongest first.' }),
    missing: Type.Array(Type.String(), {
      description: 'The match keys absent, strongest first: what would raise the score most.',
    }),
    enriched: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "The match keys that came from the visitor's browser (the event's `anonymous_id`), not from the event itself.",
      }),
    ),
  },
  {
    description:
      "A local estimate of how well the event can be matched to a person, from the keys it carries (Meta's published priority tiers and refused key combinations). Not Meta's Event Match Quality, which Meta computes from data only it has.",
  },
);

const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const EventRecordSchema = Type.Object(
  {
    event_id: Type.String(),
    event_name: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()]),
    currency: nullable(Type.String()),
    timestamp: Type.String({ format: 'date-time' }),
    status: Type.Literal('processed'),
    pixel_id: Type.String(),
    url: nullable(Type.String()),
    referrer: nullable(Type.String()),
    title: nullable(Type.String()),
    search_string: nullable(Type.String()),
    custom_data: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    user_data: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
      description: 'SHA-256 hashes only (match keys included: a record never holds an IP).',
    }),
    action_source: Type.Union(
      ACTION_SOURCES.map((source) => Type.Literal(source)),
      { description: 'As sent, else `website`.' },
    ),
    match_quality: MatchQualitySchema,
    source: Type.Union([Type.Literal('server'), Type.Literal('browser')], {
      description:
        '`server`: sent to `/v1/track`; `browser`: sent by the snippet to `/v1/collect`.',
    }),
    consent: Type.Union([ConsentSchema, Type.Null()], {
      description: 'As sent, else null (no consent given).',
    }),
    received_at: Type.String({ format: 'date-time' }),
    dropped: Type.Array(Type.String(), {
      description:
        'The `user_data` values left out because they could not be used (a phone not in E.164, a country not alpha-2 …), as paths: `["user_data.phone"]`. The event was stored without them; the answer to the track call said why in `warnings`.',
    }),
    forwarding: Type.Array(ForwardingEntrySchema, {
      description:
        'One entry per destination the event is forwarded to: its outcome, attempts and last error.',
    }),
  },
  {
    examples: [
      {
        event_id: 'order-10045',
        event_name: 'Purchase',
        value: 49.99,
        currency: 'USD',
        timestamp: '2026-11-24T18:42:10.000Z',
        status: 'processed',
        pixel_id: 'px_7Hq2LmN4pR8sT1vW',
        url: 'https://shop.example.com/checkout/thank-you',
        referrer: null,
        title: null,
        search_string: null,
        custom_data: { order_id: '10045', items: 2 },
        user_data: {
          email: '8c87b489ce35cf2e2f39f80e282cb2e804932a56a213983eeeb428407d43b52d',
        },
        action_source: 'website',
        match_quality: {
          score: 2.5,
          keys: ['email'],
          missing: [
            'fbc',
            'phone',
            'external_id',
            'fbp',
            'client_ip_address',
            'client_user_agent',
            'country',
            'first_name',
            'last_name',
            'city',
            'state',
            'zip',
          ],
        },
        source: 'server',
        consent: { ad_user_data: 'granted', ad_personalization: 'granted' },
        received_at: '2026-11-24T18:42:10.412Z',
        dropped: [],
        forwarding: [
          {
            destination_id: 'dst_4f8Kq2ZxY7mN3pLw',
            platform: meta.type,
            status: 'forwarded',
            attempts: 1,
            reason: null,
            last_error: null,
            forwarded_at: '2026-11-24T18:42:10.903Z',
          },
        ],
      },
    ],
  },
);

export const EventListSchema = Type.Object({
  events: Type.Array(EventRecordSchema),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
export type EventList = Static<typeof EventListSchema>;

const RECORD_EXAMPLE = (EventRecordSchema.examples as Array<Record<string, unknown>>)[0];

export const DestinationVerdictSchema = Type.Object({
  destination_id: Type.String(),
  platform: PlatformSchema,
  would_forward: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: 'Why not, when `would_forward` is false.' })),
  consent: Type.String({
    description:
      "What the event's `consent` means for this destination: skipped and why, or what the platform is sent (GA4's `consent`, Meta's `data_processing_options`, TikTok's `limited_data_use`).",
  }),
  payload: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      'The exact request body the destination would be sent (null when the platform would be sent nothing). The body only: credentials travel in the query or headers and are never shown.',
  }),
});

export const ValidateEventResponseSchema = Type.Object(
  {
    valid: Type.Literal(true),
    event: EventRecordSchema,
    destinations: Type.Optional(
      Type.Array(DestinationVerdictSchema, {
        description:
          "One entry per destination of the pixel, in the destinations list's order. Left out for an `ingest`-scope key, which may check its events but not read the account's forwarding set-up (destination ids, platform ids, states).",
      }),
    ),
    warnings: Type.Optional(Type.Array(Type.String(), { description: WARNINGS_DESCRIPTION })),
  },
  {
    examples: [
      {
        valid: true,
        event: { ...RECORD_EXAMPLE, forwarding: [] },
        destinations: [
          {
            destination_id: 'dst_4f8Kq2ZxY7mN3pLw',
            platform: meta.type,
            would_forward: true,
            consent: 'sent as usual (Meta takes no ad_personalization signal)',
            payload: {
              data: [
                {
                  event_name: 'Purchase',
                  event_time: 1764009730,
                  event_id: 'order-10045',
                  action_source: 'website',
                  user_data: {
                    em: ['8c87b489ce35cf2e2f39f80e282cb2e804932a56a213983eeeb428407d43b52d'],
                  },
                  event_source_url: 'https://shop.example.com/checkout/thank-you',
                  custom_data: { value: 49.99, currency: 'USD', order_id: '10045', items: 2 },
                },
              ],
            },
          },
          {
            destination_id: 'dst_9Tc3Vb6Xn1Qw8ErY',
            platform: ga4.type,
            would_forward: false,
            consent: 'consent {"ad_user_data":"GRANTED","ad_personalization":"GRANTED"}',
            reason: 'missing user_data.ga_client_id, which GA4 requires as client_id',
            payload: null,
          },
        ],
      },
    ],
  },
);
