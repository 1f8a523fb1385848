/**
 * The live tail's bus on PostgreSQL (contract §13), which hears every instance's commits
 * through LISTEN/NOTIFY; its reads are shared (sql/ports/feed.ts).
 */
import pg from 'pg';
import type { FeedBus } from '../sql/ports/feed.ts';

/** How long the listener waits before reconnecting after its connection dropped. */
const RECONNECT_MS = 1_000;

/**
 * One LISTEN connection per process, opened at the first subscription. Payloads are
 * `<pixel_id> <seq>,<seq>…` (events.ts INSERT_BATCH); only the ids travel, the records are
 * read by the subscriber, account-scoped.
 */
export class PostgresEventBus implements FeedBus {
  private readonly listeners = new Map<string, Set<(seqs: number[]) => void>>();
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
  ) {}

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client(this.pool.options);
      client.on('notification', (message) => this.dispatch(message.payload ?? ''));
      const lost = () => {
        if (this.client !== client) return;
        this.client = null;
        client.end().catch(() => {});
        if (!this.closed && this.listeners.size > 0) {
          setTimeout(() => void this.connect().catch(lost), RECONNECT_MS).unref();
        }
      };
      client.on('error', lost);
      client.on('end', lost);
      try {
        await client.connect();
        await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
      } catch (error) {
        client.end().catch(() => {});
        throw error;
      } finally {
        this.connecting = null;
      }
      this.client = client;
      return client;
    })();
    return this.connecting;
  }

  private dispatch(payload: string): void {
    const space = payload.indexOf(' ');
    const subscribers = this.listeners.get(payload.slice(0, space));
    if (!subscribers || space < 0) return;
    const seqs = payload
      .slice(space + 1)
      .split(',')
      .map(Number);
    for (const listener of subscribers) listener(seqs);
  }

  async subscribe(pixelId: string, listener: (seqs: number[]) => void): Promise<() => void> {
    await this.connect();
    let set = this.listeners.get(pixelId);
    if (!set) {
      set = new Set();
      this.listeners.set(pixelId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(pixelId) === set) this.listeners.delete(pixelId);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await client?.end().catch(() => {});
  }
}
