/**
 * What a destination needs to reach its platform (contract §12), declared once: the schemas
 * validate `POST /v1/pixels/:id/destinations` bodies when that route exists, and type the
 * payload builders now. Secrets (`access_token`, `api_secret`) are write-only there.
 */
import { type Static, Type } from '@sinclair/typebox';

const eventNames = Type.Optional(
  Type.Record(
    Type.String({ minLength: 1, maxLength: 100 }),
    Type.String({ minLength: 1, maxLength: 100 }),
    {
      maxProperties: 100,
      description:
        'Overrides of the default event name mapping: `{"<our name>": "<platform name>"}`.',
    },
  ),
);
const testEventCode = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      "The platform's test mode code. For testing only: while it is set, every event goes to the platform's Test events tool and none counts as a live conversion; leave it out for live traffic.",
  }),
);

export const MetaConfigSchema = Type.Object(
  {
    pixel_id: Type.String({ pattern: '^\\d{1,32}$', errorMessage: 'must be digits' }),
    access_token: Type.String({ minLength: 1, maxLength: 1024 }),
    test_event_code: testEventCode,
    event_names: eventNames,
  },
  { additionalProperties: false },
);
export type MetaConfig = Static<typeof MetaConfigSchema>;

export const Ga4ConfigSchema = Type.Object(
  {
    measurement_id: Type.String({ pattern: '^G-[A-Z0-9]{1,32}$', errorMessage: 'must be G-…' }),
    api_secret: Type.String({ minLength: 1, maxLength: 256 }),
    event_names: eventNames,
  },
  { additionalProperties: false },
);
export type Ga4Config = Static<typeof Ga4ConfigSchema>;

export const TiktokConfigSchema = Type.Object(
  {
    pixel_code: Type.String({
      pattern: '^[A-Z0-9]{1,64}$',
      errorMessage: 'must be a TikTok pixel code',
    }),
    access_token: Type.String({ minLength: 1, maxLength: 1024 }),
    test_event_code: testEventCode,
    event_names: eventNames,
  },
  { additionalProperties: false },
);
export type TiktokConfig = Static<typeof TiktokConfigSchema>;
