/** The stats API's shapes (contract §13), declared once for validation, types and OpenAPI. */
import { type Static, Type } from '@sinclair/typebox';

const dateBound = (description: string) =>
  Type.Optional(
    Type.String({
      format: 'date-or-date-time',
      errorMessage: 'must be an ISO 8601 date or date-time',
      description,
    }),
  );

export const StatsQuerySchema = Type.Object(
  {
    start_date: dateBound(
      'Inclusive; a date alone means the start of that UTC day. Default: 24 hours (interval `hour`) or 30 days (interval `day`) before `end_date`.',
    ),
    end_date: dateBound('Inclusive; a date alone means the end of that UTC day. Default: now.'),
    interval: Type.Optional(
      Type.Union([Type.Literal('hour'), Type.Literal('day')], {
        description: 'UTC bucket width. Default `hour`.',
      }),
    ),
    event_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type StatsQueryInput = Static<typeof StatsQuerySchema>;

export const StatsSchema = Type.Object({
  buckets: Type.Array(
    Type.Object({
      start: Type.String({ format: 'date-time', description: 'Start of the UTC hour or day.' }),
      event_name: Type.String(),
      count: Type.Integer({ description: 'Events stored for the bucket (duplicates excluded).' }),
      value_sum: Type.Number({
        description: 'Sum of `value` over those events, whatever their currency (no value adds 0).',
      }),
    }),
    {
      description:
        'One entry per bucket and event name that holds events, oldest first; empty buckets are left out.',
    },
  ),
  interval: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
});
export type Stats = Static<typeof StatsSchema>;
