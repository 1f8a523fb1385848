/** The keys API's shapes (contract §13), declared once for validation, types and OpenAPI. */
import { type Static, Type } from '@sinclair/typebox';

const Scope = Type.Union([Type.Literal('full'), Type.Literal('ingest')], {
  description:
    '`full` may call every route; `ingest` only `POST /v1/track` and `POST /v1/track/batch` (for code that runs where a key can leak).',
});

export const CreateKeySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for.' }),
    scope: Type.Optional(
      Type.Union(Scope.anyOf, { description: `${Scope.description} Default \`full\`.` }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'Checkout server', scope: 'ingest' }] },
);
export type CreateKeyInput = Static<typeof CreateKeySchema>;

const nullableTime = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const KeySchema = Type.Object({
  id: Type.String({ description: 'Key identifier (`key_…`).' }),
  name: Type.String(),
  scope: Scope,
  prefix: Type.String({ description: "The key's first characters, for recognising it." }),
  last4: Type.String({ description: "The key's last four characters." }),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: nullableTime('Last authenticated request, to within a minute.'),
  revoked_at: nullableTime('When the key was revoked; `null` while it works.'),
});
export type KeyObject = Static<typeof KeySchema>;

export const CreatedKeySchema = Type.Composite([
  KeySchema,
  Type.Object({ key: Type.String({ description: 'The API key. Shown only in this response.' }) }),
]);

export const KeyListSchema = Type.Object({
  keys: Type.Array(KeySchema),
  total: Type.Integer({ description: "The account's keys, revoked ones included." }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const KeyIdParams = Type.Object({
  key_id: Type.String({ description: 'Key identifier (`key_…`).' }),
});
