import type { MatchKeyStore } from '../../domain/ports.ts';
import * as q from '../queries/forwardable.ts';
import type { SqliteDatabase } from './database.ts';
import { SqliteRunner } from './runner.ts';

/** Raw match keys and match quality reads (contract §11), through the shared queries. */
export class SqliteMatchKeyStore implements MatchKeyStore {
  private readonly runner: SqliteRunner;

  constructor(db: SqliteDatabase) {
    this.runner = new SqliteRunner(db);
  }

  forwardable(accountId: string, pixelId: string, eventIds: string[]) {
    const { sql } = this.runner;
    return this.runner.read(() => q.forwardable(sql, accountId, pixelId, eventIds));
  }

  eraseExpired(now: Date, limit: number) {
    const { sql } = this.runner;
    return this.runner.transaction(() => q.eraseExpired(sql, now, limit));
  }

  averageMatchQuality(accountId: string, pixelId: string, fromHour: number) {
    const { sql } = this.runner;
    return this.runner.read(() => q.averageMatchQuality(sql, accountId, pixelId, fromHour));
  }
}
