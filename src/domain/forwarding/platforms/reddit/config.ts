/** A Reddit destination's `config` (Conversions API v3): the pixel and its conversion token. */
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

export const RedditConfigSchema = Type.Object(
  {
    pixel_id: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      errorMessage: 'must be a Reddit pixel ID',
    }),
    access_token: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'The conversion access token generated in Reddit Ads Manager.',
    }),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'RedditConfig' },
);
export type RedditConfig = Static<typeof RedditConfigSchema>;

export const REDDIT_FORM: readonly ConfigField[] = [
  { name: 'pixel_id', label: 'Reddit pixel ID', placeholder: 't2_abc123' },
  { name: 'access_token', label: 'Conversion access token', secret: true, placeholder: '' },
];
