import type { Account } from './model.ts';
import type { Clock, Store } from './ports.ts';

/** What every domain verb is handed: the adapters it may use and who is asking. */
export interface Context {
  store: Store;
  clock: Clock;
  /** The authenticated account; every read and write is scoped to it. */
  account: Account;
}
