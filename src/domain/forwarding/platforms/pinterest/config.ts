/** A Pinterest destination's `config` (Conversions API v5): the ad account and its token. */
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

export const PinterestConfigSchema = Type.Object(
  {
    ad_account_id: Type.String({ pattern: '^\\d{1,32}$', errorMessage: 'must be digits' }),
    access_token: Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'The conversion access token from Ads Manager (or an OAuth token with `ads:write`).',
    }),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'PinterestConfig' },
);
export type PinterestConfig = Static<typeof PinterestConfigSchema>;

export const PINTEREST_FORM: readonly ConfigField[] = [
  { name: 'ad_account_id', label: 'Ad account ID', placeholder: '549755885175' },
  { name: 'access_token', label: 'Conversion access token', secret: true, placeholder: 'pina_…' },
];
