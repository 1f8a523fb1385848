import type { MatchKeyStore } from '../../../domain/ports/match-key-store.ts';
import * as forwardable from '../../queries/forwardable.ts';
import * as visitors from '../../queries/visitors.ts';
import type { Runner } from '../query.ts';

/** Raw match keys and match quality reads (contract §11). */
export function matchKeyStore({ sql: db, read, transaction }: Runner): MatchKeyStore {
  return {
    forwardable: (accountId, pixelId, eventIds, platform) =>
      read(() => forwardable.forwardable(db, accountId, pixelId, eventIds, platform)),
    eraseExpired: (now, limit) =>
      transaction(function* () {
        const keys = yield* forwardable.eraseExpired(db, now, limit);
        return keys + (yield* visitors.eraseExpiredVisitors(db, now, limit - keys));
      }),
    visitorKeys: (accountId, pixelId, anonymousId, now) =>
      read(() => visitors.visitorKeys(db, accountId, pixelId, anonymousId, now)),
    lastBrowserHit: (accountId, pixelId) =>
      read(() => visitors.lastBrowserHit(db, accountId, pixelId)),
    averageMatchQuality: (accountId, pixelId, fromHour) =>
      read(() => forwardable.averageMatchQuality(db, accountId, pixelId, fromHour)),
  };
}
