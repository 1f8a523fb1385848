/**
 * The numbered migrations of one store's directory (sqlite/migrations, postgres/migrations)
 * that a database has not applied yet: listed the same way for both, applied each its own way.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Migration {
  /** The file's name without `.sql` (e.g. `009_forwarding`), as schema_migrations keeps it. */
  version: string;
  sql: string;
}

/** `dir`'s `NNN_name.sql` files whose version is not in `applied`, in number order. */
export function pendingMigrations(dir: URL, applied: ReadonlySet<string>): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((file) => ({ file, version: file.replace(/\.sql$/, '') }))
    .filter(({ version }) => !applied.has(version))
    .map(({ file, version }) => ({ version, sql: readFileSync(new URL(file, dir), 'utf8') }));
}
