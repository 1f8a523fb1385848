import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../../test/harness.ts';
import { pendingMigrations } from './migration-files.ts';

describe('pending migrations (both stores list their migration files this way)', () => {
  const dir = tempDir('trackway-migrations-');
  after(() => dir.remove());
  const files: Record<string, string> = {
    '010_later.sql': 'SELECT 10;',
    '002_second.sql': 'SELECT 2;',
    '001_first.sql': 'SELECT 1;',
    '003_third.sql': 'SELECT 3;',
    // Not migrations: no number, another ending, a backup.
    'README.md': '# notes',
    'notes.sql': 'SELECT 0;',
    '004_draft.sql.bak': 'SELECT 4;',
  };
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir.path, name), sql);
  const url = pathToFileURL(`${dir.path}/`);

  it('lists the numbered .sql files in number order, with their SQL', () => {
    assert.deepEqual(pendingMigrations(url, new Set()), [
      { version: '001_first', sql: 'SELECT 1;' },
      { version: '002_second', sql: 'SELECT 2;' },
      { version: '003_third', sql: 'SELECT 3;' },
      { version: '010_later', sql: 'SELECT 10;' },
    ]);
  });

  it('leaves out the versions already applied', () => {
    const pending = pendingMigrations(url, new Set(['001_first', '003_third']));
    assert.deepEqual(
      pending.map((m) => m.version),
      ['002_second', '010_later'],
    );
  });

  it('SQLite and PostgreSQL have the same migration numbers (a migration goes in both)', () => {
    const numbers = (store: string) =>
      pendingMigrations(new URL(`./${store}/migrations/`, import.meta.url), new Set()).map(
        (m) => m.version.split('_')[0],
      );
    const sqlite = numbers('sqlite');
    assert.ok(sqlite.length > 0);
    assert.deepEqual(sqlite, numbers('postgres'));
  });
});
