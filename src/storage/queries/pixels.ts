/** Pixel queries, written once for both databases (sql/query.ts). */
import type { Pixel, WebhookEvent } from '../../domain/model.ts';
import type { Change, Page } from '../../domain/ports.ts';
import { type PixelRow, toPixel } from '../rows.ts';
import { applyChange } from '../sql/change.ts';
import {
  all,
  emit,
  first,
  forUpdate,
  lockAccount,
  prepared,
  type Query,
  run,
  type Sql,
} from '../sql/query.ts';

/**
 * Creates the pixel unless the account holds `quota` already. Run in a transaction: under the
 * account's lock the count cannot be stale when the insert commits, so concurrent creates
 * cannot both squeeze under the quota, on any number of instances.
 */
export function* createPixel(
  db: Sql,
  pixel: Pixel,
  quota: number | null,
  events: WebhookEvent[],
): Query<'created' | 'quota_exceeded'> {
  yield* lockAccount(db, pixel.accountId);
  if (quota !== null && (yield* countPixels(db, pixel.accountId)) >= quota) {
    return 'quota_exceeded';
  }
  yield* run(
    db.q.insertInto('pixels').values({
      id: pixel.id,
      account_id: pixel.accountId,
      name: pixel.name,
      domain: pixel.domain,
      tracking_domain: pixel.trackingDomain,
      status: pixel.status,
      created_at: db.store.time(pixel.createdAt),
      updated_at: db.store.time(pixel.updatedAt),
    }),
  );
  yield* emit(events);
  return 'created';
}

function* countPixels(db: Sql, accountId: string): Query<number> {
  const row = yield* first(
    db.q
      .selectFrom('pixels')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId),
  );
  return Number(row?.n ?? 0);
}

/** Prepared (compiled once): tracking reads the pixel on every pixel-cache miss. */
const byId = prepared((db: Sql, accountId: string, pixelId: string) =>
  db.q
    .selectFrom('pixels')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', pixelId),
);

export function* getPixel(db: Sql, accountId: string, pixelId: string): Query<Pixel | null> {
  const row = yield* first(byId(db, accountId, pixelId));
  return row ? toPixel(db.codec, row as PixelRow) : null;
}

/** Newest first. */
export function* listPixels(
  db: Sql,
  accountId: string,
  page: Page,
): Query<{ pixels: Pixel[]; total: number }> {
  const rows = yield* all(
    db.q
      .selectFrom('pixels')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset),
  );
  const total = yield* countPixels(db, accountId);
  return { pixels: rows.map((r) => toPixel(db.codec, r as PixelRow)), total };
}

export function updatePixel(db: Sql, accountId: string, pixelId: string, change: Change<Pixel>) {
  return applyChange(
    (function* () {
      const row = yield* first(
        forUpdate(
          db,
          db.q
            .selectFrom('pixels')
            .selectAll()
            .where('account_id', '=', accountId)
            .where('id', '=', pixelId),
        ),
      );
      return row ? toPixel(db.codec, row as PixelRow) : null;
    })(),
    change,
    (p) =>
      run(
        db.q
          .updateTable('pixels')
          .set({
            name: p.name,
            domain: p.domain,
            tracking_domain: p.trackingDomain,
            status: p.status,
            updated_at: db.store.time(p.updatedAt),
          })
          .where('account_id', '=', p.accountId)
          .where('id', '=', p.id),
      ),
  );
}
