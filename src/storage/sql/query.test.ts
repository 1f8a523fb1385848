import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresSql, prepared, type Sql, sqliteSql } from './query.ts';

/** The statement findByKeyHash and touchKey use, built fresh each call. */
const build = (db: Sql, hash: string, at: unknown) =>
  db.q
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .selectAll('a')
    .where('k.key_hash', '=', hash)
    .where((eb) => eb.or([eb('k.last_used_at', 'is', null), eb('k.last_used_at', '<', at)]))
    .where('k.revoked_at', 'is', null);

describe('prepared statements', () => {
  for (const db of [sqliteSql, postgresSql]) {
    it(`compile to what building each call compiles to, with each call's arguments [${db.dialect}]`, () => {
      const statement = prepared(build);
      for (const [hash, at] of [
        ['h1', 1],
        ['h2', new Date(5)],
        ['h3', null],
      ] as const) {
        const once = statement(db, hash, at).compile();
        const fresh = build(db, hash, at).compile();
        assert.equal(once.sql, fresh.sql);
        assert.deepEqual(once.parameters, fresh.parameters);
      }
    });
  }

  it('keeps one template per dialect', () => {
    const statement = prepared(build);
    const sqlite = statement(sqliteSql, 'h', 1).compile();
    const pg = statement(postgresSql, 'h', 1).compile();
    assert.match(sqlite.sql, /= \?/);
    assert.match(pg.sql, /= \$1/);
    assert.equal(statement(sqliteSql, 'x', 2).compile().sql, sqlite.sql);
  });
});
