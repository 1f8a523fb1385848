/**
 * The live tail's bus on SQLite (contract §13); its reads are shared (sql/ports/feed.ts).
 */
import { EventEmitter } from 'node:events';
import type { FeedBus } from '../sql/ports/feed.ts';

/**
 * One process owns a SQLite file, so the bus is in-process: the event store calls `announce`
 * after each commit is durable.
 */
export class SqliteEventBus implements FeedBus {
  private readonly bus = new EventEmitter().setMaxListeners(0);

  readonly announce = (inserted: { pixelId: string; seq: number }[]): void => {
    if (this.bus.eventNames().length === 0) return;
    const byPixel = new Map<string, number[]>();
    for (const { pixelId, seq } of inserted) {
      const seqs = byPixel.get(pixelId);
      if (seqs) seqs.push(seq);
      else byPixel.set(pixelId, [seq]);
    }
    for (const [pixelId, seqs] of byPixel) this.bus.emit(pixelId, seqs);
  };

  async subscribe(pixelId: string, listener: (seqs: number[]) => void): Promise<() => void> {
    this.bus.on(pixelId, listener);
    return () => {
      this.bus.off(pixelId, listener);
    };
  }

  async close(): Promise<void> {
    this.bus.removeAllListeners();
  }
}
