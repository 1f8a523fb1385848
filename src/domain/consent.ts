/**
 * An event's consent (contract §16): Google Consent Mode v2's names, so a site's consent banner
 * state can be passed on as it is. Declared once: it validates `/v1/track` and each batch event
 * (an unknown key is `400 Unknown field: consent.<key>`), types the record and documents both.
 */
import { type Static, Type } from '@sinclair/typebox';

const State = (description: string) =>
  Type.Optional(
    Type.Union([Type.Literal('granted'), Type.Literal('denied')], {
      errorMessage: 'must be "granted" or "denied"',
      description,
    }),
  );

export const ConsentSchema = Type.Object(
  {
    ad_user_data: State(
      "Consent to send the user's data to ad platforms. `denied`: platforms with a consent signal (GA4) get the event with it and without any user identifier; the others skip it.",
    ),
    ad_personalization: State(
      'Consent to ad personalisation: passed to the platforms that take it (GA4), ignored by the others.',
    ),
    limited_data_use: Type.Optional(
      Type.Boolean({
        description:
          '`true`: each platform\'s restricted-processing mode (Meta `data_processing_options: ["LDU"]`, TikTok `limited_data_use`; GA4 gets `ad_personalization: denied`); a platform without one skips the event.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "The visitor's consent, as the site's consent banner recorded it.",
  },
);
export type Consent = Static<typeof ConsentSchema>;
