/**
 * A Google Ads destination's `config` (Data Manager API, contract §18): the conversion customer,
 * our event names → its conversion actions, and one of two ways to an access token: a Google
 * account's OAuth client and refresh token, or a service account's key.
 */
import { createPrivateKey } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { type ConfigField, EventNamesSchema, RequireConsentSchema } from '../platform.ts';

const CustomerId = (description: string) =>
  Type.String({
    pattern: '^[0-9]{10}$',
    errorMessage: 'must be a 10-digit Google Ads customer ID without hyphens',
    description,
  });

const Secret = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description });

export const GoogleAdsConfigSchema = Type.Object(
  {
    customer_id: CustomerId(
      'The Google Ads account that owns the conversion actions (the conversion customer), 10 digits.',
    ),
    login_customer_id: Type.Optional(
      CustomerId('The manager account the credentials reach the customer through, if any.'),
    ),
    conversion_actions: Type.Record(
      Type.String({ minLength: 1, maxLength: 100 }),
      Type.String({
        pattern: '^[0-9]{1,20}$',
        errorMessage: 'must be a conversion action ID (digits)',
      }),
      {
        minProperties: 1,
        maxProperties: 100,
        description:
          'Our event names → the conversion action IDs they count as: `{"Purchase": "123456789"}`. Events without one are skipped.',
      },
    ),
    oauth: Type.Optional(
      Type.Object(
        {
          client_id: Type.String({ minLength: 1, maxLength: 300 }),
          client_secret: Secret(300, 'The OAuth client secret.'),
          refresh_token: Secret(2048, 'A refresh token with the datamanager scope.'),
        },
        {
          additionalProperties: false,
          description:
            'A Google account with access to the customer: its OAuth client and refresh token. Exactly one of `oauth` and `service_account`.',
        },
      ),
    ),
    service_account: Type.Optional(
      Type.Object(
        {
          client_email: Type.String({
            pattern: '^[^@\\s]+@[^@\\s]+$',
            maxLength: 320,
            errorMessage: 'must be the service account’s email',
          }),
          private_key: Secret(10_000, 'The key file’s `private_key` (PEM).'),
        },
        {
          additionalProperties: false,
          description:
            'A service account given access to the customer: its email and private key. Exactly one of `oauth` and `service_account`.',
        },
      ),
    ),
    event_names: EventNamesSchema,
    require_consent: RequireConsentSchema,
  },
  { additionalProperties: false, title: 'GoogleAdsConfig' },
);
export type GoogleAdsConfig = Static<typeof GoogleAdsConfigSchema>;

/** Exactly one credential, and a private key that is one: refused when saved, not at each send. */
export function checkGoogleAdsConfig(
  config: Record<string, unknown>,
): { field: string; message: string } | null {
  const c = config as GoogleAdsConfig;
  if ((c.oauth === undefined) === (c.service_account === undefined)) {
    return { field: 'oauth', message: 'exactly one of oauth and service_account is required' };
  }
  if (c.service_account !== undefined) {
    try {
      const key = createPrivateKey(c.service_account.private_key);
      if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
    } catch {
      return {
        field: 'service_account.private_key',
        message: 'must be an RSA private key in PEM form (the key file’s private_key)',
      };
    }
  }
  return null;
}

export const GOOGLE_ADS_FORM: readonly ConfigField[] = [
  { name: 'customer_id', label: 'Customer ID (10 digits)', placeholder: '1234567890' },
  {
    name: 'login_customer_id',
    label: 'Manager account ID',
    optional: true,
    placeholder: '9876543210',
  },
  {
    name: 'conversion_actions',
    label: 'Conversion actions (JSON: event name → action ID)',
    json: true,
    placeholder: '{"Purchase": "123456789"}',
  },
  { name: 'oauth.client_id', label: 'OAuth client ID', optional: true, placeholder: '' },
  {
    name: 'oauth.client_secret',
    label: 'OAuth client secret',
    secret: true,
    optional: true,
    placeholder: '',
  },
  {
    name: 'oauth.refresh_token',
    label: 'Refresh token',
    secret: true,
    optional: true,
    placeholder: '',
  },
  {
    name: 'service_account.client_email',
    label: 'Service account email (instead of OAuth)',
    optional: true,
    placeholder: 'trackway@project.iam.gserviceaccount.com',
  },
  {
    name: 'service_account.private_key',
    label: 'Service account private key (PEM)',
    secret: true,
    optional: true,
    placeholder: '-----BEGIN PRIVATE KEY-----',
  },
];
