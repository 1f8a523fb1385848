/** A Meta destination's `config` (Conversions API): the pixel (dataset) and its access token. */
import { type Static, Type } from '@sinclair/typebox';
import {
  type ConfigField,
  EventNamesSchema,
  RequireConsentSchema,
  TEST_EVENT_CODE_FIELD,
  TestEventCodeSchema,
} from '../platform.ts';

export const MetaConfigSchema = Type.Object(
  {
    pixel_id: Type.String({ pattern: '^\\d{1,32}$', errorMessage: 'must be digits' }),
    access_token: Type.String({ minLength: 1, maxLength: 1024 }),
    test_event_code: TestEventCodeSchema,
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'MetaConfig' },
);
export type MetaConfig = Static<typeof MetaConfigSchema>;

export const META_FORM: readonly ConfigField[] = [
  { name: 'pixel_id', label: 'Meta pixel ID', placeholder: '123456789012345' },
  { name: 'access_token', label: 'Access token', secret: true, placeholder: 'EAAB…' },
  TEST_EVENT_CODE_FIELD,
];
