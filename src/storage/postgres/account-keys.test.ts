/**
 * Contract §8, read from PostgreSQL's catalog after every migration: each growing table's
 * primary key and unique constraints (unique indexes too) begin with account_id, and its
 * foreign keys to another growing table carry account_id. A key without it cannot be checked
 * on one shard when the tables are distributed by account (Citus refuses to create it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dropSchema, freshSchemaName, postgresSuite, postgresUrl } from '../../../test/harness.ts';
import { GROWING_TABLES } from '../growing-tables.ts';
import { PostgresStore } from './store.ts';

describe('growing tables are keyed by account (PostgreSQL catalog)', await postgresSuite(), () => {
  const schema = freshSchemaName();
  let store: PostgresStore;

  before(async () => {
    store = await PostgresStore.open({ url: postgresUrl(schema), poolSize: 2 });
    await store.migrate();
  });
  after(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  /** Every unique index (primary keys and unique constraints included) of `tables`. */
  const uniqueKeys = async () =>
    (
      await store.pool.query<{ table: string; name: string; columns: string[] }>(
        `SELECT t.relname AS table, i.relname AS name,
                array_agg(a.attname::text ORDER BY k.n) AS columns
           FROM pg_index x
           JOIN pg_class t ON t.oid = x.indrelid
           JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_namespace s ON s.oid = t.relnamespace
           CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k (attnum, n)
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
          WHERE s.nspname = $1 AND x.indisunique AND t.relname = ANY ($2::text[])
          GROUP BY t.relname, i.relname
          ORDER BY 1, 2`,
        [schema, GROWING_TABLES],
      )
    ).rows;

  it('every primary key and unique constraint of a growing table begins with account_id', async () => {
    const keys = await uniqueKeys();
    const tables = new Set(keys.map((k) => k.table));
    for (const table of GROWING_TABLES) assert.ok(tables.has(table), `${table} has no key`);
    const wrong = keys
      .filter((k) => k.columns[0] !== 'account_id')
      .map((k) => `${k.table}.${k.name} (${k.columns.join(', ')})`);
    assert.deepEqual(wrong, [], `keys not led by account_id:\n${wrong.join('\n')}`);
  });

  it('every foreign key between growing tables carries account_id on both sides', async () => {
    const { rows } = await store.pool.query<{
      table: string;
      name: string;
      columns: string[];
      target: string;
      targetColumns: string[];
    }>(
      `SELECT t.relname AS table, c.conname AS name, f.relname AS target,
              (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.conkey)
                 WITH ORDINALITY AS k (attnum, n)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum)
                AS columns,
              (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.confkey)
                 WITH ORDINALITY AS k (attnum, n)
                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum)
                AS "targetColumns"
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid
         JOIN pg_class f ON f.oid = c.confrelid
         JOIN pg_namespace s ON s.oid = t.relnamespace
        WHERE s.nspname = $1 AND c.contype = 'f' AND t.relname = ANY ($2::text[])
          AND f.relname = ANY ($2::text[])`,
      [schema, GROWING_TABLES],
    );
    assert.ok(rows.length > 0, 'no foreign key between growing tables: the query is wrong');
    const wrong = rows
      .filter((r) => !r.columns.includes('account_id') || !r.targetColumns.includes('account_id'))
      .map((r) => `${r.table}.${r.name} (${r.columns.join(', ')}) → ${r.target}`);
    assert.deepEqual(wrong, [], `foreign keys without account_id:\n${wrong.join('\n')}`);
  });
});
