/** Event reads that are not hot paths, written once for both databases (sql/query.ts). */
import type { TrackedEvent } from '../../domain/model.ts';
import { type EventRow, toEvent } from '../rows.ts';
import { first, type Query, type Sql } from '../sql/query.ts';

export function* getEvent(
  db: Sql,
  accountId: string,
  pixelId: string,
  eventId: string,
): Query<TrackedEvent | null> {
  const row = yield* first(
    db.q
      .selectFrom('events')
      .select([
        'account_id',
        'pixel_id',
        'event_id',
        'event_name',
        'value',
        'currency',
        'timestamp',
        'received_at',
        'url',
        'referrer',
        'title',
        'search_string',
        'user_data',
        'custom_data',
      ])
      .where('pixel_id', '=', pixelId)
      .where('event_id', '=', eventId)
      .where('account_id', '=', accountId),
  );
  return row ? toEvent(db.codec, row as EventRow) : null;
}
