import type pg from 'pg';
import type { MatchKeyStore } from '../../domain/ports.ts';
import * as q from '../queries/forwardable.ts';
import { PostgresRunner } from './runner.ts';

/** Raw match keys and match quality reads (contract §11), through the shared queries. */
export class PostgresMatchKeyStore implements MatchKeyStore {
  private readonly runner: PostgresRunner;

  constructor(pool: pg.Pool) {
    this.runner = new PostgresRunner(pool);
  }

  forwardable(accountId: string, pixelId: string, eventIds: string[]) {
    const { sql } = this.runner;
    return this.runner.read(() => q.forwardable(sql, accountId, pixelId, eventIds));
  }

  eraseExpired(now: Date, limit: number) {
    const { sql } = this.runner;
    return this.runner.read(() => q.eraseExpired(sql, now, limit));
  }

  averageMatchQuality(accountId: string, pixelId: string, fromHour: number) {
    const { sql } = this.runner;
    return this.runner.read(() => q.averageMatchQuality(sql, accountId, pixelId, fromHour));
  }
}
