/**
 * Contract §8 and issue 28 item 4, read from the migration files (CI has no Citus cluster):
 * every table a PostgreSQL migration creates is placed by a migration for when the `citus`
 * extension is present. A table growing with traffic (growing-tables.ts) is distributed by
 * account_id, colocated with `events`; every other table is a reference table, copied to every
 * node. A table created after 024 (which placed the tables before it) is placed by the migration
 * that creates it, so a database never holds it local between two migrations. A local table
 * beside distributed ones fails on Citus only, where no test of ours runs by default.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GROWING_TABLES } from '../growing-tables.ts';
import { pendingMigrations } from '../migration-files.ts';

const migrations = pendingMigrations(new URL('./migrations/', import.meta.url), new Set());

/** The migration that distributed the tables existing before it. */
const CITUS = '024_citus';
/**
 * Made before this rule was written down, in a branch beside 024's, and placed by the next
 * migration (026). Applied migrations never change, so they stay the exceptions.
 */
const PLACED_LATER: Record<string, string> = {
  diag_hourly: '026_diagnostics_account_keys',
  diag_dropped_hourly: '026_diagnostics_account_keys',
  revenue_hourly: '026_diagnostics_account_keys',
  forward_hourly: '026_diagnostics_account_keys',
};

/** Strips `--` comments, so a table named only in prose is not taken for a statement's. */
const code = (sql: string) => sql.replace(/--.*$/gm, '');

const created = migrations.flatMap(({ version, sql }) =>
  [...code(sql).matchAll(/\bCREATE TABLE (?:IF NOT EXISTS )?"?(\w+)"?/gi)].map((m) => ({
    table: m[1]!,
    version,
  })),
);

/**
 * How each migration places tables on Citus: `create_distributed_table('t', 'account_id',
 * colocate_with => 'events')` or `create_reference_table('t')`, or a loop over a quoted list
 * followed by one of those calls (026's).
 */
function placements(sql: string): Map<string, 'distributed' | 'reference'> {
  const placed = new Map<string, 'distributed' | 'reference'>();
  const text = code(sql);
  for (const m of text.matchAll(/create_reference_table\('(\w+)'\)/g)) {
    placed.set(m[1]!, 'reference');
  }
  const byAccount =
    /create_distributed_table\(\s*'(\w+)',\s*'account_id'(?:,\s*colocate_with\s*=>\s*'events')?\s*\)/g;
  for (const m of text.matchAll(byAccount)) placed.set(m[1]!, 'distributed');
  // FOREACH x IN ARRAY ARRAY['a', 'b'] LOOP … create_distributed_table(x::regclass, 'account_id',
  // colocate_with => 'events') … END LOOP
  const loop = /FOREACH (\w+) IN ARRAY ARRAY\[([^\]]*)\] LOOP([\s\S]*?)END LOOP/g;
  for (const m of text.matchAll(loop)) {
    const [, name, list, body] = m;
    const distributes = new RegExp(
      `create_distributed_table\\(\\s*${name}::regclass,\\s*'account_id',\\s*colocate_with\\s*=>\\s*'events'\\s*\\)`,
    ).test(body!);
    if (!distributes) continue;
    for (const t of list!.matchAll(/'(\w+)'/g)) placed.set(t[1]!, 'distributed');
  }
  return placed;
}

const placedBy = new Map<string, { version: string; how: 'distributed' | 'reference' }>();
for (const { version, sql } of migrations) {
  for (const [table, how] of placements(sql)) placedBy.set(table, { version, how });
}

describe('every PostgreSQL table is placed on Citus by a migration', () => {
  it('reads the migrations (the parse finds tables and placements)', () => {
    assert.ok(created.length >= 20, `only ${created.length} CREATE TABLE found`);
    assert.ok(placedBy.size >= 20, `only ${placedBy.size} placements found`);
    assert.ok(
      migrations.some((m) => m.version === CITUS),
      `${CITUS} is missing`,
    );
  });

  it('distributes every growing table by account_id, colocated with events', () => {
    const wrong = GROWING_TABLES.filter((t) => placedBy.get(t)?.how !== 'distributed');
    assert.deepEqual(wrong, [], `growing tables not distributed by account_id: ${wrong}`);
  });

  it('makes every other table a reference table', () => {
    const growing = new Set<string>(GROWING_TABLES);
    const wrong = created
      .filter(({ table }) => !growing.has(table))
      .filter(({ table }) => placedBy.get(table)?.how !== 'reference')
      .map(({ table }) => table);
    assert.deepEqual(wrong, [], `tables neither growing nor reference tables: ${wrong}`);
  });

  it('places a table created after 024 in the migration that creates it', () => {
    const wrong = created
      .filter(({ version }) => version > CITUS)
      .filter(
        ({ table, version }) => placedBy.get(table)?.version !== (PLACED_LATER[table] ?? version),
      )
      .map(
        ({ table, version }) =>
          `${table} (created by ${version}, placed by ${placedBy.get(table)?.version ?? 'none'})`,
      );
    assert.deepEqual(
      wrong,
      [],
      `tables placed elsewhere than where they are created:\n${wrong.join('\n')}`,
    );
  });
});
