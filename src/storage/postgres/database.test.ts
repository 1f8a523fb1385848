/** Transactions on a real PostgreSQL: what inTransaction does when PostgreSQL aborts one. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { dropSchema, freshSchemaName, postgresSuite, postgresUrl } from '../../../test/harness.ts';
import { CONFLICT_ATTEMPTS, createPool, inTransaction } from './database.ts';

// Never skipped under CI: there PostgreSQL must be up, and its absence is a failure.
describe('PostgreSQL transactions', await postgresSuite(), () => {
  const schema = freshSchemaName();
  let pool: pg.Pool;

  before(async () => {
    pool = createPool({ url: postgresUrl(schema) }).pool;
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query('CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)');
    await pool.query('INSERT INTO counters VALUES (1, 0), (2, 0)');
  });
  after(async () => {
    await pool.end();
    await dropSchema(schema);
  });

  it('runs again the side PostgreSQL aborts to break a deadlock, so both commit', async () => {
    /** Resolves when both transactions hold their first row (only the first time round). */
    let arrived = 0;
    let bothHoldOne!: () => void;
    const holding = new Promise<void>((resolve) => {
      bothHoldOne = resolve;
    });
    let runs = 0;
    // Each side takes its rows in the opposite order: the textbook deadlock.
    const side = (first: number, second: number) =>
      inTransaction(pool, async (db) => {
        runs += 1;
        await db.query('UPDATE counters SET n = n + 1 WHERE id = $1', [first]);
        if (++arrived === 2) bothHoldOne();
        await holding;
        await db.query('UPDATE counters SET n = n + 1 WHERE id = $1', [second]);
      });
    const outcomes = await Promise.allSettled([side(1, 2), side(2, 1)]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled'],
    );
    assert.equal(runs, 3, 'one side ran twice');
    const { rows } = await pool.query('SELECT id, n FROM counters ORDER BY id');
    assert.deepEqual(rows, [
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
  });

  it('gives up after CONFLICT_ATTEMPTS runs and passes the conflict on, as a 503', async () => {
    let runs = 0;
    const failure = Object.assign(new Error('could not serialize access'), { code: '40001' });
    await assert.rejects(
      inTransaction(pool, async () => {
        runs += 1;
        throw failure;
      }),
      (error: Error & { code?: string }) =>
        error.code === 'service_unavailable' && error.cause === failure,
    );
    assert.equal(runs, CONFLICT_ATTEMPTS);
  });

  it('does not run again a transaction that failed for its own reasons', async () => {
    let runs = 0;
    await assert.rejects(
      inTransaction(pool, async (db) => {
        runs += 1;
        await db.query('INSERT INTO counters VALUES (1, 0)');
      }),
      { code: '23505' },
    );
    assert.equal(runs, 1);
  });

  it('commits durably whatever the server or URL default: synchronous_commit off is raised to on', async () => {
    const setting = async (value: string) => {
      const url = new URL(postgresUrl(schema));
      url.searchParams.set('options', `-c synchronous_commit=${value}`);
      const other = createPool({ url: url.toString(), poolSize: 1 }).pool;
      try {
        const { rows } = await other.query('SHOW synchronous_commit');
        return rows[0].synchronous_commit as string;
      } finally {
        await other.end();
      }
    };
    assert.equal(await setting('off'), 'on');
    // Stronger (or locally durable) choices are the operator's and stay.
    assert.equal(await setting('remote_apply'), 'remote_apply');
    assert.equal(await setting('local'), 'local');
  });
});
