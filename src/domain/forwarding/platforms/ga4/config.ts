/** A GA4 destination's `config` (Measurement Protocol): the web stream and its API secret. */
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

export const Ga4ConfigSchema = Type.Object(
  {
    measurement_id: Type.String({ pattern: '^G-[A-Z0-9]{1,32}$', errorMessage: 'must be G-…' }),
    api_secret: Type.String({ minLength: 1, maxLength: 256 }),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'Ga4Config' },
);
export type Ga4Config = Static<typeof Ga4ConfigSchema>;

export const GA4_FORM: readonly ConfigField[] = [
  { name: 'measurement_id', label: 'Measurement ID', placeholder: 'G-XXXXXXXXXX' },
  { name: 'api_secret', label: 'API secret', secret: true, placeholder: '' },
];
