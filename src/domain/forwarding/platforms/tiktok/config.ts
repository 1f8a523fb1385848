/** A TikTok destination's `config` (Events API): the pixel code and its access token. */
import { type Static, Type } from '@sinclair/typebox';
import {
  type ConfigField,
  EventNamesSchema,
  RequireConsentSchema,
  TEST_EVENT_CODE_FIELD,
  TestEventCodeSchema,
} from '../platform.ts';

export const TiktokConfigSchema = Type.Object(
  {
    pixel_code: Type.String({
      pattern: '^[A-Z0-9]{1,64}$',
      errorMessage: 'must be a TikTok pixel code',
    }),
    access_token: Type.String({ minLength: 1, maxLength: 1024 }),
    test_event_code: TestEventCodeSchema,
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'TiktokConfig' },
);
export type TiktokConfig = Static<typeof TiktokConfigSchema>;

export const TIKTOK_FORM: readonly ConfigField[] = [
  { name: 'pixel_code', label: 'Pixel code', placeholder: 'C4ABCDEFGHIJ' },
  { name: 'access_token', label: 'Access token', secret: true, placeholder: '' },
  TEST_EVENT_CODE_FIELD,
];
