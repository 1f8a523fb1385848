/**
 * Group commit, shared by the SQLite and PostgreSQL event stores. A durable commit costs one
 * fsync (SQLite, synchronous=FULL) or one WAL flush (PostgreSQL); paying it once per event caps
 * ingest at the disk's flush rate. Instead, inserts that arrive while the event loop is busy are
 * queued and committed together: the first one schedules a flush on setImmediate, so everything
 * already parsed in this turn of the loop joins it, and whatever arrives while a commit runs goes
 * into the next one. A lone insert waits one loop turn, so its latency stays one commit.
 *
 * Every caller's promise settles only after the transaction holding its items has committed:
 * an acknowledgement still means "durable". The unit of submission (one `submit` call) is never
 * split across transactions, so one batch request is one commit. If a transaction fails, its
 * items are retried one per transaction, so one row the database refuses fails alone and its
 * neighbours are still stored.
 */

/**
 * Thrown by a commit that stores its items in several transactions (PostgreSQL on Citus: one
 * per account, postgres/per-account-ingest.ts) when some of them committed and others did not:
 * the result of each item whose transaction committed, the failure of an item that was alone
 * in its transaction, and nothing (undefined) for the others, which are retried one per
 * transaction as a failed batch's items are. Throwing the batch's failure instead would retry
 * the committed items too, and report events already stored as duplicates.
 */
export class PartlyCommitted<R> extends Error {
  override name = 'PartlyCommitted';
  constructor(readonly results: ReadonlyArray<PromiseSettledResult<R> | undefined>) {
    super('some of the transactions of a batch failed');
  }
}

export class GroupCommit<T, R> {
  private queue: Array<{ items: T[]; resolve(results: PromiseSettledResult<R>[]): void }> = [];
  private running = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};
  private failed = 0;

  /**
   * @param commit stores `items` in one transaction and returns one result per item, in order
   * @param maxItems most items one transaction gathers from separate submissions
   */
  constructor(
    private readonly commit: (items: T[]) => R[] | Promise<R[]>,
    private readonly maxItems: number,
  ) {}

  /** Commits `items` in one transaction (shared with concurrent submissions); results in order. */
  submit(items: T[]): Promise<PromiseSettledResult<R>[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      this.queue.push({ items, resolve });
      if (this.running) return;
      this.running = true;
      this.idle = new Promise((done) => {
        this.markIdle = done;
      });
      // One turn of the event loop lets the requests already parsed join the batch.
      setImmediate(() => void this.drain());
    });
  }

  /** One item: its result, or its own error. */
  async one(item: T): Promise<R> {
    const [result] = await this.submit([item]);
    if (result!.status === 'rejected') throw result!.reason;
    return result!.value;
  }

  /**
   * Transactions of several items that failed and were retried one item each (a row the
   * database refused, a deadlock, an outage). Read by tests and diagnostics.
   */
  get failedBatches(): number {
    return this.failed;
  }

  /** Resolves once nothing is queued or in flight (for close()). */
  flushed(): Promise<void> {
    return this.idle;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      // Whole submissions up to maxItems; a submission larger than that goes alone.
      let take = 1;
      let count = this.queue[0]!.items.length;
      while (take < this.queue.length && count + this.queue[take]!.items.length <= this.maxItems) {
        count += this.queue[take]!.items.length;
        take += 1;
      }
      await this.commitUnits(this.queue.splice(0, take));
    }
    this.running = false;
    this.markIdle();
  }

  private async commitUnits(
    units: Array<{ items: T[]; resolve(results: PromiseSettledResult<R>[]): void }>,
  ): Promise<void> {
    const items = units.flatMap((u) => u.items);
    let results: PromiseSettledResult<R>[];
    try {
      const values = await this.commit(items);
      results = values.map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      if (error instanceof PartlyCommitted && error.results.length === items.length) {
        this.failed += 1;
        results = [];
        // In their original order, so the first of two equal event ids still wins.
        for (const [i, item] of items.entries()) {
          results.push((error as PartlyCommitted<R>).results[i] ?? (await this.alone(item)));
        }
      } else if (items.length === 1) {
        results = [{ status: 'rejected', reason: error }];
      } else {
        this.failed += 1;
        results = [];
        // Retried in their original order, so the first of two equal event ids still wins.
        for (const item of items) results.push(await this.alone(item));
      }
    }
    let offset = 0;
    for (const unit of units) {
      unit.resolve(results.slice(offset, offset + unit.items.length));
      offset += unit.items.length;
    }
  }

  /** One item in a transaction of its own: its result, or its own error. */
  private async alone(item: T): Promise<PromiseSettledResult<R>> {
    try {
      const [value] = await this.commit([item]);
      return { status: 'fulfilled', value: value! };
    } catch (error) {
      return { status: 'rejected', reason: error };
    }
  }
}
