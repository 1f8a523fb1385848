import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { splitStatements } from './statements.ts';

describe('splitStatements', () => {
  it('splits on semicolons outside strings, identifiers, dollar quotes and comments', () => {
    const sql = `-- a comment; not a boundary
CREATE TABLE "a;b" (x text DEFAULT 'it''s; here');
/* block; comment */ UPDATE t SET x = $$ ; $$;
DO $body$ BEGIN PERFORM 1; END $body$;
-- trailing comment only`;
    assert.deepEqual(splitStatements(sql), [
      `-- a comment; not a boundary\nCREATE TABLE "a;b" (x text DEFAULT 'it''s; here')`,
      '/* block; comment */ UPDATE t SET x = $$ ; $$',
      'DO $body$ BEGIN PERFORM 1; END $body$',
    ]);
  });

  it('finds in every PostgreSQL migration as many statements as it has terminating semicolons', () => {
    const dir = new URL('./migrations/', import.meta.url);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
      const sql = readFileSync(new URL(file, dir), 'utf8');
      const ends = sql
        // A dollar-quoted body (a DO block) is one statement whatever it holds.
        .replace(/(\$[A-Za-z_]*\$)[\s\S]*?\1/g, '$$$$')
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n')
        .match(/;\s*$/gm);
      const statements = splitStatements(sql);
      assert.equal(statements.length, ends?.length ?? 0, file);
      for (const s of statements) assert.doesNotMatch(s, /;\s*$/, `${file}: ${s}`);
    }
  });
});
