/** A Snapchat destination's `config` (Conversions API v3): the pixel and its CAPI token. */
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

export const SnapchatConfigSchema = Type.Object(
  {
    pixel_id: Type.String({
      pattern: '^[A-Za-z0-9-]{1,64}$',
      errorMessage: 'must be a Snap pixel ID',
    }),
    access_token: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The Conversions API token generated in Snapchat Ads Manager.',
    }),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'SnapchatConfig' },
);
export type SnapchatConfig = Static<typeof SnapchatConfigSchema>;

export const SNAPCHAT_FORM: readonly ConfigField[] = [
  { name: 'pixel_id', label: 'Snap pixel ID', placeholder: 'a1b2c3d4-e5f6-7890-abcd-ef1234567890' },
  { name: 'access_token', label: 'Conversions API token', secret: true, placeholder: '' },
];
