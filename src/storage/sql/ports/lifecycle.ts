import type { LifecycleStore } from '../../../domain/ports/lifecycle-store.ts';
import * as retention from '../../queries/account-retention.ts';
import * as events from '../../queries/events.ts';
import type { Runner } from '../query.ts';

/**
 * Deleting events takes them off the counts: written per database (sqlite/lifecycle.ts,
 * postgres/lifecycle.ts).
 */
export type EventDeletes = Pick<LifecycleStore, 'erasePerson' | 'purgeBatch'>;

export function lifecycleStore(
  { sql: db, read, own }: Runner,
  deletes: EventDeletes,
): LifecycleStore {
  return {
    lastSeq: (accountId) => read(() => events.lastSeq(db, accountId)),
    erasePerson: (options) => own(() => deletes.erasePerson(options)),
    exportPage: (query) => read(() => events.exportPage(db, query)),
    purgeBatch: (accountId, pixelId, before, limit) =>
      own(() => deletes.purgeBatch(accountId, pixelId, before, limit)),
    retentionDays: (accountId) => read(() => retention.retentionDays(db, accountId)),
    setRetentionDays: (accountId, days) =>
      read(() => retention.setRetentionDays(db, accountId, days)),
  };
}
