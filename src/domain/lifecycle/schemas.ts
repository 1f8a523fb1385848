/** The data lifecycle API's shapes (contract §15), declared once for validation, types and OpenAPI. */
import { type Static, Type } from '@sinclair/typebox';

const personValue = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 500, description }));

export const ErasureSchema = Type.Object(
  {
    user_data: Type.Object(
      {
        email: personValue(
          'Normalised and hashed as on ingest; a 64-hex value is taken as the hash.',
        ),
        phone: personValue('E.164; normalised and hashed as on ingest, or its SHA-256 hex.'),
        external_id: personValue('Trimmed and hashed as on ingest, or its SHA-256 hex.'),
      },
      {
        additionalProperties: false,
        description: 'At least one key. An event matching any of them is erased.',
      },
    ),
    all_pixels: Type.Optional(
      Type.Boolean({ description: 'Erase from every pixel of the account, not only this one.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ user_data: { email: 'jane@example.com' }, all_pixels: true }],
  },
);
export type ErasureInput = Static<typeof ErasureSchema>;

export const ErasureResultSchema = Type.Object(
  { deleted: Type.Integer({ description: 'Events erased.' }) },
  { examples: [{ deleted: 3 }] },
);
export type ErasureResult = Static<typeof ErasureResultSchema>;

const dateBound = (description: string) =>
  Type.Optional(
    Type.String({
      format: 'date-or-date-time',
      errorMessage: 'must be an ISO 8601 date or date-time',
      description,
    }),
  );

export const ExportQuerySchema = Type.Object(
  {
    start_date: dateBound('Inclusive. A date alone means the start of that UTC day.'),
    end_date: dateBound('Inclusive. A date alone means the end of that UTC day.'),
    format: Type.Optional(
      Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], {
        description:
          '`ndjson` (default): one event record a line. `csv`: a header row, then one row an event; `custom_data` and `user_data` as JSON text.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExportQueryInput = Static<typeof ExportQuerySchema>;
export type ExportFormat = NonNullable<ExportQueryInput['format']>;
