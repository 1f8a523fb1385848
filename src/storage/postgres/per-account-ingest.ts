/**
 * Stores a batch of events as one transaction per account, of plain statements that each write
 * one account's rows: the ingest path for Citus (issue 28 item 4). It writes exactly what
 * events.ts INSERT_BATCH writes (the events, raw match keys, visitor identities, forwarding
 * jobs, the diagnostics and count rollups, the outbox, the live tail's notices) and reports
 * exactly what it reports, for the same batch.
 *
 * Why two paths. On plain PostgreSQL, INSERT_BATCH (one statement of ~20 data-modifying CTEs
 * over the whole batch) is the fastest shape: one round trip and one commit for the lot. On
 * Citus the same statement is ~19× slower (bench/results/citus-2026-11-27.md): Citus plans
 * every INSERT CTE as its own distributed step with intermediate results shipped to the
 * workers ("Router planner doesn't support INSERT common table expressions"), and a batch of
 * several accounts commits on several workers with two-phase commit. Here each statement is a
 * multi-row `INSERT … VALUES … ON CONFLICT` whose rows all name the one account, which Citus
 * routes whole to that account's shard (an `INSERT … SELECT` from parameters would go through
 * the coordinator instead), and one account's transaction touches one worker: no two-phase
 * commit. The prototype of this shape took ~34 ms for 50 events on Citus (12 ms on plain
 * PostgreSQL), ~60× faster than INSERT_BATCH there. What is computed from the stored rows in
 * SQL there (which events are new, their rollups, their jobs and messages) is computed here in
 * Node from the insert's answer, and written with sorted keys, as INSERT_BATCH does.
 *
 * Several accounts' transactions are in flight at once, each on its own pooled connection
 * (ACCOUNTS_IN_FLIGHT). Their outcomes are independent: when some commit and others fail, the
 * caller is told which (PartlyCommitted in group-commit.ts), so only the failed ones are retried.
 */
import type pg from 'pg';
import { newMessageId } from '../../domain/ids.ts';
import type { InsertOutcome, NewEvent } from '../../domain/ports/event-store.ts';
import { DIAG_FLAGS } from '../../domain/stats/diagnostics.ts';
import { hourOf } from '../event-totals.ts';
import { type MatchColumns, matchColumns } from '../match-columns.ts';
import type { QueuedWork } from '../sql/committed.ts';
import { inTransaction } from './database.ts';
import { firstsOfBatch, fromMs, MAX_NOTIFY_PAYLOAD, SEQ_ROOM } from './ingest-batch.ts';

/**
 * Accounts' transactions one batch runs at once: enough to overlap their round trips to
 * different workers, few enough to leave most of the pool to the requests' reads.
 */
export const ACCOUNTS_IN_FLIGHT = 4;

/**
 * Parameters after which a statement is cut and the rest of the rows sent in the next one
 * (PostgreSQL takes 65,535 at most; a row here has at most 21). Rows stay in sorted order.
 */
const MAX_PARAMETERS = 30_000;

export interface AccountsCommitted {
  /**
   * Per event, in order: its outcome when its account's transaction committed; its failure
   * when that transaction held it alone; undefined when it failed with others (to retry alone).
   */
  results: (PromiseSettledResult<InsertOutcome> | undefined)[];
  /** What the committed transactions queued for the workers. */
  queued: QueuedWork;
}

/** One new event as it goes in: its record, its extra columns, its seq (arrival order). */
interface Arrival {
  pending: NewEvent;
  m: MatchColumns;
  seq: number;
  hour: number;
}

/**
 * Stores `batch` with one transaction per account. Throws when no account's transaction
 * committed (the batch failed as a whole, as insertMany's statement would); otherwise says
 * what happened to each event. Within the list the first of two equal `(pixel_id, event_id)`
 * wins, as it would arriving first on its own.
 */
export async function insertPerAccount(
  pool: pg.Pool,
  batch: NewEvent[],
  channel: string,
): Promise<AccountsCommitted> {
  const { firsts, repeats } = firstsOfBatch(batch);
  // seq is the arrival order: drawn for the whole batch in one round trip, before any
  // account's transaction, and handed out in arrival order. A value drawn is never drawn
  // again, so a transaction rolled back (or run again after a conflict) may reuse its own.
  const seqs = await drawSeqs(pool, firsts.length);
  const accounts = new Map<string, { arrivals: Arrival[]; repeats: NewEvent[] }>();
  const of = (accountId: string) => {
    let group = accounts.get(accountId);
    if (group === undefined) {
      group = { arrivals: [], repeats: [] };
      accounts.set(accountId, group);
    }
    return group;
  };
  firsts.forEach((pending, i) => {
    of(pending.event.accountId).arrivals.push({
      pending,
      m: matchColumns(pending.event),
      seq: seqs[i]!,
      hour: hourOf(pending.event.timestamp.getTime()),
    });
  });
  for (const pending of repeats) of(pending.event.accountId).repeats.push(pending);

  const groups = [...accounts];
  const done = new Map<string, PromiseSettledResult<AccountCommitted>>();
  let next = 0;
  const lane = async () => {
    while (next < groups.length) {
      const [accountId, group] = groups[next++]!;
      try {
        const value = await inTransaction(pool, (client) =>
          storeAccount(client, accountId, group.arrivals, group.repeats, channel),
        );
        done.set(accountId, { status: 'fulfilled', value });
      } catch (reason) {
        done.set(accountId, { status: 'rejected', reason });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ACCOUNTS_IN_FLIGHT, groups.length) }, lane));

  const committed: AccountCommitted[] = [];
  let failure: PromiseRejectedResult | undefined;
  for (const [accountId] of groups) {
    const r = done.get(accountId)!;
    if (r.status === 'fulfilled') committed.push(r.value);
    else failure ??= r;
  }
  // Nothing committed: the batch failed as a whole, as insertMany's one statement fails.
  if (committed.length === 0) throw failure!.reason;
  const stored = new Set<NewEvent>();
  const queued: QueuedWork = { webhookMessages: false, forwardingJobs: false };
  for (const r of committed) {
    for (const p of r.stored) stored.add(p);
    queued.webhookMessages ||= r.messages;
    queued.forwardingJobs ||= r.jobs;
  }
  const size = new Map<string, number>();
  for (const p of batch) size.set(p.event.accountId, (size.get(p.event.accountId) ?? 0) + 1);
  return {
    results: batch.map((p) => {
      const r = done.get(p.event.accountId)!;
      if (r.status === 'fulfilled') {
        return { status: 'fulfilled', value: stored.has(p) ? 'inserted' : 'duplicate' };
      }
      // Alone in its transaction: that was its own try. With others: retried alone.
      return size.get(p.event.accountId) === 1 ? r : undefined;
    }),
    queued,
  };
}

/** What one account's transaction stored and queued. */
interface AccountCommitted {
  stored: NewEvent[];
  messages: boolean;
  jobs: boolean;
}

/** `n` values of the events' seq, ascending (a table-less statement: the coordinator's own). */
async function drawSeqs(pool: pg.Pool, n: number): Promise<number[]> {
  const { rows } = await pool.query<{ seq: number }>(
    `SELECT nextval((SELECT pg_get_serial_sequence('events', 'seq'))::regclass) AS seq
       FROM generate_series(1, $1::int)`,
    [n],
  );
  return rows.map((r) => r.seq).sort((a, b) => a - b);
}

/** Placeholders of one statement: `$1` is always the account. */
class Parameters {
  readonly values: unknown[];
  constructor(accountId: string) {
    this.values = [accountId];
  }
  /** `value` as the next parameter: its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** A time as its epoch milliseconds (a number is written by pg as exactly that). */
  time(ms: number | null): string {
    return fromMs(this.add(ms));
  }
}

/**
 * `head VALUES (row) … tail` for `items`, in their order, as few statements as the
 * parameter limit allows; nothing sent when there is no row. Every row names the account
 * (`$1`), so on Citus the statement goes whole to that account's shard.
 */
async function insertRows<T, R extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.PoolClient,
  accountId: string,
  items: readonly T[],
  head: string,
  row: (item: T, p: Parameters) => string,
  tail = '',
): Promise<R[]> {
  const answer: R[] = [];
  let i = 0;
  while (i < items.length) {
    const p = new Parameters(accountId);
    const tuples: string[] = [];
    while (i < items.length && p.values.length < MAX_PARAMETERS) tuples.push(row(items[i++]!, p));
    const { rows } = await client.query<R>(`${head} VALUES ${tuples.join(', ')} ${tail}`, p.values);
    answer.push(...rows);
  }
  return answer;
}

/**
 * Code-unit order: the same for every instance, which is what keeps two transactions taking
 * the same keys from deadlocking (see INSERT_BATCH), and the C collation's order in the BMP.
 */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Compares tuples of strings and numbers element by element. */
function byKey(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    const c = typeof x === 'number' ? x - (y as number) : byText(x, y as string);
    if (c !== 0) return c;
  }
  return 0;
}

/** Rows summed by key, then sorted by it. */
function rollup<V>(
  entries: Iterable<[(string | number)[], V]>,
  add: (into: V | undefined, value: V) => V,
): Array<[(string | number)[], V]> {
  const groups = new Map<string, [(string | number)[], V]>();
  for (const [k, v] of entries) {
    const id = JSON.stringify(k);
    const g = groups.get(id);
    groups.set(id, [k, add(g?.[1], v)]);
  }
  return [...groups.values()].sort((a, b) => byKey(a[0], b[0]));
}

/** One account's batch: every statement names the account (`$1`). */
async function storeAccount(
  client: pg.PoolClient,
  accountId: string,
  arrivals: Arrival[],
  repeats: NewEvent[],
  channel: string,
): Promise<AccountCommitted> {
  // The events, in (pixel_id, event_id) order: the locks on their keys are taken in one
  // global order, so two instances sharing event ids wait for each other instead of
  // deadlocking (INSERT_BATCH's comment). The answer names the new ones by their seq.
  const sorted = [...arrivals].sort((a, b) =>
    byKey(
      [a.pending.event.pixelId, a.pending.event.eventId],
      [b.pending.event.pixelId, b.pending.event.eventId],
    ),
  );
  const returned = await insertRows<Arrival, { seq: number }>(
    client,
    accountId,
    sorted,
    `INSERT INTO events (seq, account_id, pixel_id, event_id, event_name, value, currency,
       timestamp, received_at, url, referrer, title, search_string, user_data, custom_data,
       action_source, platform_hashes, match_quality, dropped, consent, source, anonymous_id)
     OVERRIDING SYSTEM VALUE`,
    ({ pending: { event: x }, m, seq }, p) =>
      `(${p.add(seq)}, $1, ${p.add(x.pixelId)}, ${p.add(x.eventId)}, ${p.add(x.eventName)},
        ${p.add(x.value)}, ${p.add(x.currency)}, ${p.time(x.timestamp.getTime())},
        ${p.time(x.receivedAt.getTime())}, ${p.add(x.url)}, ${p.add(x.referrer)},
        ${p.add(x.title)}, ${p.add(x.searchString)},
        ${p.add(x.userData === null ? null : JSON.stringify(x.userData))},
        ${p.add(x.customDataJson ?? (x.customData === null ? null : JSON.stringify(x.customData)))},
        ${p.add(m.actionSource)}, ${p.add(m.platformHashes)}, ${p.add(m.matchQuality)},
        ${p.add(m.dropped)}, ${p.add(x.consent ? JSON.stringify(x.consent) : null)},
        ${p.add(m.source)}, ${p.add(m.anonymousId)})`,
    `ON CONFLICT (account_id, pixel_id, event_id) DO NOTHING RETURNING seq`,
  );
  const newSeqs = new Set(returned.map((r) => r.seq));
  // In insertion order, as INSERT_BATCH's `inserted` rows come: sums run in the same order.
  const inserted = sorted.filter((a) => newSeqs.has(a.seq));

  // Contract §11: the raw match keys apart from the record, for the new events carrying any.
  await insertRows(
    client,
    accountId,
    inserted.filter((a) => a.m.raw !== null),
    'INSERT INTO event_match_keys (account_id, seq, expires_at, match_keys, location)',
    ({ m, seq }, p) =>
      `($1, ${p.add(seq)}, ${p.time(m.raw!.expiresAtMs)}, ${p.add(m.raw!.matchKeys)},
        ${p.add(m.raw!.location)})`,
  );

  // Identity stitching: a browser event replaces its visitor's identifiers (a repeated event
  // too: it is still their latest hit), the batch's last hit per visitor winning.
  const visitors = new Map<string, Arrival>();
  for (const a of arrivals) {
    if (a.m.visitor === null || a.m.anonymousId === null) continue;
    visitors.set(`${a.pending.event.pixelId}\u0000${a.m.anonymousId}`, a);
  }
  await insertRows(
    client,
    accountId,
    [...visitors.values()].sort((a, b) =>
      byKey(
        [a.pending.event.pixelId, a.m.anonymousId!],
        [b.pending.event.pixelId, b.m.anonymousId!],
      ),
    ),
    `INSERT INTO visitor_identities (pixel_id, anonymous_id, account_id, keys, last_seen_at,
       expires_at)`,
    ({ pending: { event: x }, m }, p) =>
      `(${p.add(x.pixelId)}, ${p.add(m.anonymousId)}, $1, ${p.add(m.visitor!.keys)},
        ${p.time(x.receivedAt.getTime())}, ${p.time(m.visitor!.expiresAtMs)})`,
    `ON CONFLICT (account_id, pixel_id, anonymous_id) DO UPDATE SET keys = excluded.keys,
       last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at`,
  );

  // Forwarding jobs and the outbox go to new events only: with none, nothing to look up.
  let jobs = false;
  let messages = false;
  if (inserted.length > 0) {
    const targets = await lookUpTargets(client, accountId, inserted);
    jobs = await writeJobs(client, accountId, inserted, targets.destinations);
    messages = await writeOutbox(client, inserted, targets.endpoints);
  }

  await writeRollups(client, accountId, arrivals, inserted, newSeqs, repeats);

  // Tells every instance's live tail which events this transaction stored: `<pixel_id>
  // <seq>,<seq>…` on the store's channel, split so no payload passes MAX_NOTIFY_PAYLOAD.
  // NOTIFY is transactional, so listeners hear of the events only once they are committed,
  // and never of a rolled-back batch. The statement has no table: on Citus the coordinator
  // runs it in its own part of the transaction, where the listeners are, and delivers the
  // notices when it commits, after the worker has.
  const payloads = notices(inserted);
  if (payloads.length > 0) {
    await client.query(
      'SELECT pg_notify($1, p) IS NULL AS sent FROM json_array_elements_text($2::json) AS p',
      [channel, JSON.stringify(payloads)],
    );
  }
  return { stored: inserted.map((a) => a.pending), messages, jobs };
}

interface Destination {
  id: string;
  pixelId: string;
  events: string[] | null;
  sources: string[] | null;
}

interface Endpoint {
  id: string;
  accountId: string;
  events: string[];
}

/**
 * The enabled destinations of the new events' pixels and the enabled endpoints of the
 * accounts their webhook events belong to: reference tables on Citus, read in one statement.
 */
async function lookUpTargets(
  client: pg.PoolClient,
  accountId: string,
  inserted: Arrival[],
): Promise<{ destinations: Destination[]; endpoints: Endpoint[] }> {
  const pixels = [...new Set(inserted.map((a) => a.pending.event.pixelId))];
  const owners = [...new Set(inserted.flatMap((a) => a.pending.emit.map((w) => w.accountId)))];
  const { rows } = await client.query<{
    kind: 'destination' | 'endpoint';
    id: string;
    owner: string;
    events: string[] | null;
    sources: string[] | null;
  }>(
    `SELECT 'destination' AS kind, id, pixel_id AS owner, events, sources
       FROM destinations WHERE account_id = $1 AND pixel_id = ANY ($2::text[]) AND enabled
     UNION ALL
     SELECT 'endpoint', id, account_id, events, NULL
       FROM webhook_endpoints
      WHERE account_id = ANY ($3::text[]) AND enabled AND deleted_at IS NULL`,
    [accountId, pixels, owners],
  );
  const destinations: Destination[] = [];
  const endpoints: Endpoint[] = [];
  for (const r of rows) {
    if (r.kind === 'destination') {
      destinations.push({ id: r.id, pixelId: r.owner, events: r.events, sources: r.sources });
    } else {
      endpoints.push({ id: r.id, accountId: r.owner, events: r.events ?? [] });
    }
  }
  return { destinations, endpoints };
}

/**
 * The forwarding jobs commit with the events (contract §12), one per enabled destination
 * whose filter the event matches, and each new job is +1 pending in the diagnostics'
 * forwarding rollup (migration 025). Whether any job was written.
 */
async function writeJobs(
  client: pg.PoolClient,
  accountId: string,
  inserted: Arrival[],
  destinations: Destination[],
): Promise<boolean> {
  if (destinations.length === 0) return false;
  const wanted: Array<{ destination: string; a: Arrival }> = [];
  for (const a of inserted) {
    const x = a.pending.event;
    for (const d of destinations) {
      if (d.pixelId !== x.pixelId) continue;
      if (d.events !== null && !d.events.includes(x.eventName)) continue;
      if (d.sources !== null && !d.sources.includes(a.m.source)) continue;
      wanted.push({ destination: d.id, a });
    }
  }
  wanted.sort((j, k) =>
    byKey(
      [j.destination, j.a.pending.event.pixelId, j.a.pending.event.eventId],
      [k.destination, k.a.pending.event.pixelId, k.a.pending.event.eventId],
    ),
  );
  const written = await insertRows<
    (typeof wanted)[number],
    { destination_id: string; pixel_id: string; event_id: string }
  >(
    client,
    accountId,
    wanted,
    `INSERT INTO forward_jobs (account_id, destination_id, pixel_id, event_id, status,
       attempts, created_at, next_attempt_at)`,
    ({ destination, a }, p) => {
      const at = p.time(a.pending.event.receivedAt.getTime());
      return `($1, ${p.add(destination)}, ${p.add(a.pending.event.pixelId)},
        ${p.add(a.pending.event.eventId)}, 'pending', 0, ${at}, ${at})`;
    },
    'ON CONFLICT DO NOTHING RETURNING destination_id, pixel_id, event_id',
  );
  if (written.length === 0) return false;
  const hourOfEvent = new Map(
    inserted.map((a) => [`${a.pending.event.pixelId}\u0000${a.pending.event.eventId}`, a.hour]),
  );
  // Keyed as INSERT_BATCH orders them (pixel, account, hour, destination); the example is the
  // greatest event id of the group (max(), in code-unit order).
  const pending = rollup<{ n: number; example: string }>(
    written.map((j) => [
      [j.pixel_id, hourOfEvent.get(`${j.pixel_id}\u0000${j.event_id}`)!, j.destination_id],
      { n: 1, example: j.event_id },
    ]),
    (into, v) =>
      into === undefined
        ? v
        : {
            n: into.n + v.n,
            example: byText(v.example, into.example) > 0 ? v.example : into.example,
          },
  );
  await insertRows(
    client,
    accountId,
    pending,
    `INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason, n,
       example_event_id)`,
    ([[pixel, hour, destination], v], p) =>
      `(${p.add(pixel)}, $1, ${p.add(destination)}, ${p.add(hour)}, 'pending', '', ${p.add(v.n)},
        ${p.add(v.example)})`,
    `ON CONFLICT (account_id, pixel_id, hour, destination_id, status, reason)
       DO UPDATE SET n = forward_hourly.n + excluded.n,
         example_event_id = excluded.example_event_id`,
  );
  return true;
}

/**
 * The outbox (outbox.ts, the same rows writeOutbox writes): one message per webhook event of a
 * new event whose account has an enabled endpoint subscribed to its type, and one delivery per
 * such endpoint. Whether any message was written.
 */
async function writeOutbox(
  client: pg.PoolClient,
  inserted: Arrival[],
  endpoints: Endpoint[],
): Promise<boolean> {
  const emitted = inserted
    .flatMap((a) => a.pending.emit)
    .map((event) => ({
      id: newMessageId(),
      event,
      to: endpoints.filter((w) => w.accountId === event.accountId && w.events.includes(event.type)),
    }))
    .filter((m) => m.to.length > 0);
  if (emitted.length === 0) return false;
  // Each message on its own account's rows (the event's, for every event this service emits).
  const owners = new Map<string, typeof emitted>();
  for (const m of emitted)
    owners.set(m.event.accountId, [...(owners.get(m.event.accountId) ?? []), m]);
  for (const [owner, mine] of owners) {
    await insertRows(
      client,
      owner,
      mine,
      'INSERT INTO webhook_messages (id, account_id, event_type, data, created_at)',
      ({ id, event }, p) =>
        `(${p.add(id)}, $1, ${p.add(event.type)}, ${p.add(JSON.stringify(event.data))},
          ${p.time(event.occurredAt.getTime())})`,
    );
    // After the messages, in the same transaction: the foreign key finds them.
    await insertRows(
      client,
      owner,
      mine.flatMap((m) => m.to.map((w) => ({ m, w }))),
      `INSERT INTO webhook_deliveries (message_id, endpoint_id, account_id, status, attempts,
         next_attempt_at)`,
      ({ m, w }, p) =>
        `(${p.add(m.id)}, ${p.add(w.id)}, $1, 'pending', 0, ${p.time(m.event.occurredAt.getTime())})`,
    );
  }
  return true;
}

/** Count rows keyed after the account, each sorted by its key (INSERT_BATCH's orders). */
async function writeRollups(
  client: pg.PoolClient,
  accountId: string,
  arrivals: Arrival[],
  inserted: Arrival[],
  newSeqs: Set<number>,
  repeats: NewEvent[],
): Promise<void> {
  // The diagnostics' event rollup (migration 025): what each stored event carried (the bits
  // of DIAG_FLAGS), and the duplicates refused, those of the table and those repeated within
  // the batch.
  const diagRow = (stored: boolean, flags: number) => {
    const bits = Array.from({ length: DIAG_FLAGS.length }, (_, k) =>
      stored ? (flags >> k) & 1 : 0,
    );
    return [stored ? 1 : 0, stored ? 0 : 1, ...bits];
  };
  const diag = rollup<number[]>(
    [
      ...arrivals.map((a): [(string | number)[], number[]] => [
        [a.pending.event.pixelId, a.hour, a.pending.event.eventName, a.m.source],
        diagRow(newSeqs.has(a.seq), a.m.diagFlags),
      ]),
      ...repeats.map(({ event: x }): [(string | number)[], number[]] => [
        [x.pixelId, hourOf(x.timestamp.getTime()), x.eventName, x.source ?? 'server'],
        diagRow(false, 0),
      ]),
    ],
    (into, v) => (into === undefined ? v : into.map((n, i) => n + v[i]!)),
  );
  // diag_hourly's counter columns, in the order diagRow sums them (migration 025).
  const counters = DIAG_FLAGS;
  await insertRows(
    client,
    accountId,
    diag,
    `INSERT INTO diag_hourly (pixel_id, account_id, hour, event_name, source, n, duplicates,
       ${counters.join(', ')})`,
    ([[pixel, hour, name, source], sums], p) =>
      `(${p.add(pixel)}, $1, ${p.add(hour)}, ${p.add(name)}, ${p.add(source)},
        ${sums.map((n) => p.add(n)).join(', ')})`,
    `ON CONFLICT (account_id, pixel_id, hour, event_name, source)
       DO UPDATE SET n = diag_hourly.n + excluded.n,
         duplicates = diag_hourly.duplicates + excluded.duplicates,
         ${counters.map((c) => `${c} = diag_hourly.${c} + excluded.${c}`).join(', ')}`,
  );
  if (inserted.length === 0) return;

  const dropped = rollup<number>(
    inserted.flatMap((a) =>
      (a.m.dropped === null ? [] : (a.pending.event.dropped ?? [])).map(
        (field): [(string | number)[], number] => [[a.pending.event.pixelId, a.hour, field], 1],
      ),
    ),
    (into, v) => (into ?? 0) + v,
  );
  await insertRows(
    client,
    accountId,
    dropped,
    'INSERT INTO diag_dropped_hourly (pixel_id, account_id, hour, field, n)',
    ([[pixel, hour, field], n], p) =>
      `(${p.add(pixel)}, $1, ${p.add(hour)}, ${p.add(field)}, ${p.add(n)})`,
    `ON CONFLICT (account_id, pixel_id, hour, field)
       DO UPDATE SET n = diag_dropped_hourly.n + excluded.n`,
  );

  // Revenue per currency: event_counts' value_sum adds EUR to USD.
  const sum = (into: number[] | undefined, v: number[]) =>
    into === undefined ? v : into.map((n, i) => n + v[i]!);
  const revenue = rollup<number[]>(
    inserted
      .filter((a) => (a.pending.event.value ?? null) !== null)
      .map((a) => [
        [
          a.pending.event.pixelId,
          a.hour,
          a.pending.event.eventName,
          a.pending.event.currency ?? '',
        ],
        [1, a.pending.event.value!],
      ]),
    sum,
  );
  await insertRows(
    client,
    accountId,
    revenue,
    'INSERT INTO revenue_hourly (pixel_id, account_id, hour, event_name, currency, n, value_sum)',
    ([[pixel, hour, name, currency], [n, value]], p) =>
      `(${p.add(pixel)}, $1, ${p.add(hour)}, ${p.add(name)}, ${p.add(currency)}, ${p.add(n)},
        ${p.add(value)})`,
    `ON CONFLICT (account_id, pixel_id, hour, event_name, currency)
       DO UPDATE SET n = revenue_hourly.n + excluded.n,
         value_sum = revenue_hourly.value_sum + excluded.value_sum`,
  );

  // The counts behind `total` (event-totals.ts): all time, per day, per hour.
  const totals = rollup<number>(
    inserted.map((a) => [[a.pending.event.pixelId, a.pending.event.eventName], 1]),
    (into, v) => (into ?? 0) + v,
  );
  await insertRows(
    client,
    accountId,
    totals,
    'INSERT INTO event_totals AS c (pixel_id, account_id, event_name, n)',
    ([[pixel, name], n], p) => `(${p.add(pixel)}, $1, ${p.add(name)}, ${p.add(n)})`,
    'ON CONFLICT (pixel_id, account_id, event_name) DO UPDATE SET n = c.n + excluded.n',
  );
  const value = (a: Arrival) => a.pending.event.value ?? 0;
  const daily = rollup<number[]>(
    inserted.map((a) => [
      [a.pending.event.pixelId, a.pending.event.eventName, Math.floor(a.hour / 24)],
      [1, value(a)],
    ]),
    sum,
  );
  await insertRows(
    client,
    accountId,
    daily,
    'INSERT INTO event_counts_daily AS c (pixel_id, account_id, event_name, day, n, value_sum)',
    ([[pixel, name, day], [n, v]], p) =>
      `(${p.add(pixel)}, $1, ${p.add(name)}, ${p.add(day)}, ${p.add(n)}, ${p.add(v)})`,
    `ON CONFLICT (pixel_id, account_id, event_name, day)
       DO UPDATE SET n = c.n + excluded.n, value_sum = c.value_sum + excluded.value_sum`,
  );
  const hourly = rollup<number[]>(
    inserted.map((a) => {
      // The score as INSERT_BATCH reads it back from match_quality: null when not a number.
      const score = Number.isFinite(a.m.score) ? a.m.score : null;
      return [
        [a.pending.event.pixelId, a.pending.event.eventName, a.hour],
        [1, value(a), score ?? 0, score === null ? 0 : 1],
      ];
    }),
    sum,
  );
  await insertRows(
    client,
    accountId,
    hourly,
    `INSERT INTO event_counts AS c (pixel_id, account_id, event_name, hour, n, value_sum,
       match_sum, match_n)`,
    ([[pixel, name, hour], [n, v, match, matched]], p) =>
      `(${p.add(pixel)}, $1, ${p.add(name)}, ${p.add(hour)}, ${p.add(n)}, ${p.add(v)},
        ${p.add(match)}, ${p.add(matched)})`,
    `ON CONFLICT (pixel_id, account_id, event_name, hour)
       DO UPDATE SET n = c.n + excluded.n, value_sum = c.value_sum + excluded.value_sum,
         match_sum = c.match_sum + excluded.match_sum, match_n = c.match_n + excluded.match_n`,
  );
}

/** The live tail's payloads: per pixel, its new seqs ascending, cut under the size limit. */
function notices(inserted: Arrival[]): string[] {
  const byPixel = new Map<string, number[]>();
  for (const a of inserted) {
    const seqs = byPixel.get(a.pending.event.pixelId);
    if (seqs === undefined) byPixel.set(a.pending.event.pixelId, [a.seq]);
    else seqs.push(a.seq);
  }
  const payloads: string[] = [];
  for (const [pixel, seqs] of byPixel) {
    seqs.sort((a, b) => a - b);
    const per = Math.max(
      1,
      Math.floor((MAX_NOTIFY_PAYLOAD - 1 - Buffer.byteLength(pixel)) / SEQ_ROOM),
    );
    for (let i = 0; i < seqs.length; i += per) {
      payloads.push(`${pixel} ${seqs.slice(i, i + per).join(',')}`);
    }
  }
  return payloads;
}
