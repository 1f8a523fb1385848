/** Pixel queries, written once for both databases (sql/query.ts). */
import type { Pixel, WebhookEvent } from '../../domain/model.ts';
import type { Change, Page } from '../../domain/ports/common.ts';
import { type PixelRow, toPixel } from '../rows.ts';
import { applyChange } from '../sql/change.ts';
import {
  all,
  emit,
  first,
  forUpdate,
  lockAccount,
  note,
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
      publishable_key: pixel.publishableKey,
      previous_publishable_key: pixel.previousPublishableKey,
      previous_publishable_key_expires_at:
        pixel.previousKeyExpiresAt === null ? null : db.store.time(pixel.previousKeyExpiresAt),
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
    function* (p) {
      yield* run(
        db.q
          .updateTable('pixels')
          .set({
            name: p.name,
            domain: p.domain,
            tracking_domain: p.trackingDomain,
            status: p.status,
            publishable_key: p.publishableKey,
            previous_publishable_key: p.previousPublishableKey,
            previous_publishable_key_expires_at:
              p.previousKeyExpiresAt === null ? null : db.store.time(p.previousKeyExpiresAt),
            updated_at: db.store.time(p.updatedAt),
          })
          .where('account_id', '=', p.accountId)
          .where('id', '=', p.id),
      );
      // Told once committed: the track path's pixel cache forgets its copy.
      yield* note({ pixel: { accountId: p.accountId, pixelId: p.id } });
    },
  );
}

/**
 * The pixel a publishable key belongs to: its current key, or the one a rotation replaced while
 * that still has time left at `now`. Indexed both ways (migration 018).
 */
export function* findByPublishableKey(db: Sql, key: string, now: Date): Query<Pixel | null> {
  let row = yield* first(db.q.selectFrom('pixels').selectAll().where('publishable_key', '=', key));
  if (!row) {
    row = yield* first(
      db.q
        .selectFrom('pixels')
        .selectAll()
        .where('previous_publishable_key', '=', key)
        .where('previous_publishable_key_expires_at', '>', db.store.time(now)),
    );
  }
  return row ? toPixel(db.codec, row as PixelRow) : null;
}

/**
 * Whether `hostname` is one of an active pixel's sites: its domain, a subdomain of it, or its
 * tracking domain (a CORS preflight carries no key, so any pixel's sites will do). The
 * hostname's parent domains are the candidates for `domain`, so each is an exact match.
 */
export function* isPixelSite(db: Sql, hostname: string): Query<boolean> {
  const labels = hostname.split('.');
  const parents = labels.map((_, i) => labels.slice(i).join('.')).filter((d) => d.includes('.'));
  const row = yield* first(
    db.q
      .selectFrom('pixels')
      .select('id')
      .where('status', '=', 'active')
      .where((eb) =>
        eb.or([
          eb('domain', 'in', parents.length > 0 ? parents : [hostname]),
          eb('tracking_domain', '=', hostname),
        ]),
      )
      .limit(1),
  );
  return row !== undefined;
}
