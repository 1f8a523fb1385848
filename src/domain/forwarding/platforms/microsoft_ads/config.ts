/**
 * A Microsoft Advertising destination's `config` (UET Conversions API): the UET tag and the
 * tag's Conversions API token. The token is the one the UET tag page makes ("Use Conversions
 * API"), not the Microsoft Advertising OAuth token.
 */
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

export const MicrosoftAdsConfigSchema = Type.Object(
  {
    tag_id: Type.String({
      pattern: '^\\d{1,20}$',
      errorMessage: 'must be a UET tag ID (digits)',
      description: 'The UET tag ID (Microsoft Advertising → Tools → UET tag).',
    }),
    access_token: Type.String({
      minLength: 1,
      maxLength: 4096,
      description:
        "The UET tag's Conversions API token (UET tag → Use Conversions API); not the Microsoft Advertising OAuth token.",
    }),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'MicrosoftAdsConfig' },
);
export type MicrosoftAdsConfig = Static<typeof MicrosoftAdsConfigSchema>;

export const MICROSOFT_ADS_FORM: readonly ConfigField[] = [
  { name: 'tag_id', label: 'UET tag ID', placeholder: '343123456' },
  { name: 'access_token', label: 'Conversions API token', secret: true, placeholder: '' },
];
