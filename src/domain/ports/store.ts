/**
 * What the domain needs from the outside world, one port a file beside this one. Every adapter
 * (SQLite, PostgreSQL, memory, Redis) implements them; the contract suites in storage/ and
 * rate-limit/ hold each adapter to the same behaviour. Every query is scoped by the caller's
 * account id.
 */

import type { AccountStore } from './account-store.ts';
import type { DestinationStore } from './destination-store.ts';
import type { EventFeed } from './event-feed.ts';
import type { EventStore } from './event-store.ts';
import type { ForwardingStore } from './forwarding-store.ts';
import type { KeyStore } from './key-store.ts';
import type { LifecycleStore } from './lifecycle-store.ts';
import type { MatchKeyStore } from './match-key-store.ts';
import type { PixelStore } from './pixel-store.ts';
import type { SessionStore } from './session-store.ts';
import type { StatsStore } from './stats-store.ts';
import type { WebhookStore } from './webhook-store.ts';

/**
 * The store's ports, one a field. Storage builds them in one place for both databases
 * (storage/sql/ports/index.ts storePorts, one builder a file beside it), so a new port is a
 * file and a line there and a line here.
 */
export interface StorePorts {
  destinations: DestinationStore;
  forwarding: ForwardingStore;
  accounts: AccountStore;
  pixels: PixelStore;
  events: EventStore;
  webhooks: WebhookStore;
  keys: KeyStore;
  stats: StatsStore;
  feed: EventFeed;
  sessions: SessionStore;
  lifecycle: LifecycleStore;
  matchKeys: MatchKeyStore;
}

export interface Store extends StorePorts {
  /**
   * Whether the database is sharded (Citus): a worker's look for due work then reads every
   * shard, so commits wake the workers at most every SHARDED_WAKE_GAP_MS (main.ts).
   */
  readonly sharded: boolean;
  /** Runs pending migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /** Cheap round trip, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
