/**
 * Queries written once for both databases (issue 16's seam).
 *
 * A shared query is a generator: it yields compiled statements and receives their rows, so the
 * same code runs synchronously on better-sqlite3 (inside `db.transaction`, which must not await)
 * and asynchronously on pg (inside one pooled client's transaction). Each adapter's runner
 * (sqlite/runner.ts, postgres/runner.ts) drives it with its own driver. Statements are built
 * with Kysely, used only as a typed builder compiled per dialect: it never holds a connection.
 *
 *   function* renamePixel(db: Sql, id: string, name: string): Query<Pixel | null> {
 *     const row = yield* first(db.q.selectFrom('pixels').selectAll().where('id', '=', id));
 *     if (!row) return null;
 *     yield* run(db.q.updateTable('pixels').set({ name }).where('id', '=', id));
 *     return toPixel(db.codec, { ...row, name });
 *   }
 */
import {
  type Compilable,
  type CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type SqlBool,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import type { WebhookEvent } from '../../domain/model.ts';
import { type Codec, postgresCodec, sqliteCodec } from '../rows.ts';
import type { Note } from './committed.ts';
import type { Tables } from './tables.ts';

export type DialectName = 'sqlite' | 'postgres';

/** What a shared query builds with: the dialect's builder and how its driver returns types. */
export interface Sql {
  readonly dialect: DialectName;
  /** Builds statements only; compiling one never touches a database. */
  readonly q: Kysely<Tables>;
  /** Reads driver values into the model's types. */
  readonly codec: Codec;
  /** Writes the model's types as this database stores them. */
  readonly store: StoreCodec;
}

/** The inverse of `Codec`: how a value is written (SQLite: ms, 0/1, JSON text). */
export interface StoreCodec {
  time(value: Date): number | Date;
  timeOrNull(value: Date | null): number | Date | null;
  bool(value: boolean): number | boolean;
  /** JSON documents (SQLite: text; pg: json/jsonb, which pg serialises from a string too). */
  json(value: unknown): string;
  /** A list of strings (SQLite: JSON text; pg: text[]). */
  list(values: readonly string[]): string | readonly string[];
}

/** One statement for the runner, and what the generator wants back. */
export type Step =
  | { kind: 'all'; query: CompiledQuery }
  | { kind: 'first'; query: CompiledQuery }
  | { kind: 'run'; query: CompiledQuery }
  /** Webhook messages for the transactional outbox: each adapter's fan-out writes them. */
  | { kind: 'emit'; events: WebhookEvent[] }
  /** A fact for the runner to announce once the transaction has committed (committed.ts). */
  | { kind: 'note'; note: Note };

export type Query<T> = Generator<Step, T, unknown>;

/** Drives shared queries on one database's driver: sqlite/runner.ts, postgres/runner.ts. */
export interface Runner {
  readonly sql: Sql;
  /** Runs `work` outside a transaction (reads, and single statements). */
  read<T>(work: () => Query<T>): Promise<T>;
  /** Runs `work` in one transaction, committed durably before resolving. */
  transaction<T>(work: () => Query<T>): Promise<T>;
  /**
   * Runs a port method the adapter writes itself (a hot path, a queue claim), with the same
   * translation of driver errors as `read` and `transaction`: an outage is the domain's
   * `storageUnavailable` (a 503) wherever a port's work is done, never a driver's error. What
   * `work` notes is announced once it has resolved (its own transactions committed).
   */
  own<T>(work: (note: (fact: Note) => void) => T | Promise<T>): Promise<T>;
}

/** Every row the statement returns. */
export function* all<R>(statement: Compilable<R>): Query<R[]> {
  return (yield { kind: 'all', query: statement.compile() }) as R[];
}

/** The first row, or undefined. */
export function* first<R>(statement: Compilable<R>): Query<R | undefined> {
  return (yield { kind: 'first', query: statement.compile() }) as R | undefined;
}

/** Runs a statement for its effect; answers how many rows it changed. */
export function* run(statement: Compilable<unknown>): Query<number> {
  return (yield { kind: 'run', query: statement.compile() }) as number;
}

/**
 * Records `events` in the outbox, inside the current transaction. The fan-out is a hot path
 * written per database (sqlite/outbox.ts outboxWriter, postgres/outbox.ts writeOutbox).
 */
export function* emit(events: WebhookEvent[]): Query<void> {
  if (events.length > 0) yield { kind: 'emit', events };
}

/** Tells the runner what this transaction did, to announce after its COMMIT (committed.ts). */
export function* note(fact: Note): Query<void> {
  yield { kind: 'note', note: fact };
}

/**
 * Takes the account's row lock where the database needs one: PostgreSQL serialises writers per
 * account on it (`FOR UPDATE`), so a count-then-insert under a quota cannot go stale on any
 * number of instances. SQLite needs nothing: its transactions here are IMMEDIATE, holding the
 * database's one write lock from the first statement.
 */
export function* lockAccount(db: Sql, accountId: string): Query<void> {
  if (db.dialect !== 'postgres') return;
  yield* first(db.q.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate());
}

/**
 * `statement` with the row lock PostgreSQL needs for a read-modify-write (see `lockAccount`
 * for why SQLite needs none).
 */
export function forUpdate<S extends { forUpdate(): S }>(db: Sql, statement: S): S {
  return db.dialect === 'postgres' ? statement.forUpdate() : statement;
}

/**
 * `column` is true, written as a literal (SQLite: `= 1`, pg: `= true`) rather than a bound
 * parameter, so that a partial index or a constant the planner needs stays visible to it.
 */
export const isTrue = (db: Sql, column: string) =>
  sql<SqlBool>`${sql.ref(column)} = ${sql.lit(db.store.bool(true))}`;

/** Stands for a prepared statement's argument while its template is compiled. */
class Arg {
  constructor(readonly index: number) {}
}

/**
 * A statement compiled once per dialect and then only given new arguments: building and
 * compiling with Kysely costs ~10 µs a call, several times what better-sqlite3 takes to run a
 * keyed read (docs/decisions.md, "One storage seam"). `build` must not look at its arguments
 * (they are placeholders when it runs): it may only pass them where a value goes.
 */
export function prepared<A extends unknown[], R>(
  build: (db: Sql, ...args: A) => Compilable<R>,
): (db: Sql, ...args: A) => Compilable<R> {
  const templates = new Map<DialectName, CompiledQuery<R>>();
  return (db, ...args) => {
    let template = templates.get(db.dialect);
    if (!template) {
      const placeholders = args.map((_, i) => new Arg(i)) as A;
      template = build(db, ...placeholders).compile();
      templates.set(db.dialect, template);
    }
    const { sql: text, parameters, query, queryId } = template;
    return {
      compile: () => ({
        sql: text,
        query,
        queryId,
        parameters: parameters.map((p) => (p instanceof Arg ? args[p.index] : p)),
      }),
    };
  };
}

function builder(dialect: DialectName): Kysely<Tables> {
  const sqlite = dialect === 'sqlite';
  return new Kysely<Tables>({
    dialect: {
      createAdapter: () => (sqlite ? new SqliteAdapter() : new PostgresAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) =>
        sqlite ? new SqliteIntrospector(db) : new PostgresIntrospector(db),
      createQueryCompiler: () => (sqlite ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
    },
  });
}

export const sqliteSql: Sql = {
  dialect: 'sqlite',
  q: builder('sqlite'),
  codec: sqliteCodec,
  store: {
    time: (d) => d.getTime(),
    timeOrNull: (d) => (d === null ? null : d.getTime()),
    bool: (b) => (b ? 1 : 0),
    json: (v) => JSON.stringify(v),
    list: (v) => JSON.stringify(v),
  },
};

export const postgresSql: Sql = {
  dialect: 'postgres',
  q: builder('postgres'),
  codec: postgresCodec,
  store: {
    time: (d) => d,
    timeOrNull: (d) => d,
    bool: (b) => b,
    json: (v) => JSON.stringify(v),
    list: (v) => v,
  },
};
