/**
 * A LinkedIn destination's `config` (Conversions API, contract §18): the ad account whose rules
 * these are (shown, not sent), our event names → its conversion rules, and the OAuth client and
 * refresh token the service gets its access tokens with.
 */
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

export const LinkedinConfigSchema = Type.Object(
  {
    ad_account_id: Type.String({
      pattern: '^[0-9]{1,20}$',
      errorMessage: 'must be a LinkedIn ad account ID (digits)',
      description: 'The ad account the conversion rules belong to (shown, not sent).',
    }),
    conversion_rules: Type.Record(
      Type.String({ minLength: 1, maxLength: 100 }),
      Type.String({
        pattern: '^[0-9]{1,20}$',
        errorMessage: 'must be a conversion rule ID (digits)',
      }),
      {
        minProperties: 1,
        maxProperties: 100,
        description:
          'Our event names → the conversion rule IDs they count for: `{"Purchase": "123456"}`. Events without one are skipped.',
      },
    ),
    oauth: Type.Object(
      {
        client_id: Type.String({ minLength: 1, maxLength: 300 }),
        client_secret: Type.String({ minLength: 1, maxLength: 300 }),
        refresh_token: Type.String({ minLength: 1, maxLength: 4096 }),
      },
      {
        additionalProperties: false,
        description:
          'The LinkedIn app and a refresh token of a member with the rw_conversions scope and a role on the ad account.',
      },
    ),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'LinkedinConfig' },
);
export type LinkedinConfig = Static<typeof LinkedinConfigSchema>;

export const LINKEDIN_FORM: readonly ConfigField[] = [
  { name: 'ad_account_id', label: 'Ad account ID', placeholder: '512345678' },
  {
    name: 'conversion_rules',
    label: 'Conversion rules (JSON: event name → rule ID)',
    json: true,
    placeholder: '{"Purchase": "12345678"}',
  },
  { name: 'oauth.client_id', label: 'OAuth client ID', placeholder: '' },
  { name: 'oauth.client_secret', label: 'OAuth client secret', secret: true, placeholder: '' },
  { name: 'oauth.refresh_token', label: 'Refresh token', secret: true, placeholder: '' },
];
