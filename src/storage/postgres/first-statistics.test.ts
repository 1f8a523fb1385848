/**
 * A fresh install analyzes its growing tables itself once it has stored FIRST_ANALYZE_AFTER
 * events (first-statistics.ts), so the raw keys' foreign-key check is planned on the primary
 * key from then on, not on events_dedup filtered by seq, which read every event of the account
 * until autovacuum got to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  bareEvent,
  dropSchema,
  freshSchemaName,
  postgresSuite,
  postgresUrl,
  storedPixel,
} from '../../../test/harness.ts';
import type { Pixel } from '../../domain/model.ts';
import { FIRST_ANALYZE_AFTER } from './first-statistics.ts';
import { PostgresStore } from './store.ts';

describe('a fresh install takes its first statistics itself', await postgresSuite(), () => {
  const schema = freshSchemaName();
  let store: PostgresStore;
  let pixel: Pixel;
  let stored = 0;

  before(async () => {
    store = await PostgresStore.open({ url: postgresUrl(schema), poolSize: 2 });
    await store.migrate();
    pixel = await storedPixel(store, new Date());
  });
  after(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  const storeEvents = async (n: number) => {
    const events = Array.from({ length: n }, (_, k) => ({
      event: bareEvent({
        accountId: pixel.accountId,
        pixelId: pixel.id,
        eventId: `e-${stored + k}`,
      }),
      emit: [],
    }));
    stored += n;
    const results = await store.events.insertEvents(events);
    assert.ok(results.every((r) => r.status === 'fulfilled'));
  };
  const everAnalyzed = async (table: string) =>
    (
      await store.pool.query<{ n: number }>(
        'SELECT reltuples AS n FROM pg_class WHERE oid = to_regclass($1)',
        [table],
      )
    ).rows[0]!.n >= 0;
  /** The generic plan PostgreSQL caches for the foreign key's check, as its text. */
  const foreignKeyCheckPlan = async () => {
    const client = await store.pool.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(
        `PREPARE fk_check (text, bigint) AS
           SELECT 1 FROM ONLY events x WHERE account_id = $1 AND seq = $2 FOR KEY SHARE OF x`,
      );
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN EXECUTE fk_check ('acct', 1)`,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await client.query('DEALLOCATE ALL; RESET plan_cache_mode').catch(() => {});
      client.release();
    }
  };

  it('leaves the tables to autovacuum below the threshold', async () => {
    await storeEvents(FIRST_ANALYZE_AFTER - 1);
    await store.events.flushed();
    assert.equal(await everAnalyzed('events'), false);
  });

  it('analyzes the growing tables once the threshold is passed, off the commit', async () => {
    await storeEvents(1);
    await store.events.flushed();
    assert.equal(await everAnalyzed('events'), true);
    assert.equal(await everAnalyzed('event_match_keys'), true);
    const plan = await foreignKeyCheckPlan();
    assert.match(plan, /events_pkey/, plan);
    assert.match(plan, /Index Cond: \(\(account_id = \$1\) AND \(seq = \$2\)\)/, plan);
  });
});
