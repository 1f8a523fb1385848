/**
 * What both PostgreSQL ingest paths share, so the two store a batch alike: which events of a
 * batch are the first of their key (the others are duplicates within the batch, whatever is
 * stored), how a time travels as a parameter, and the live tail's notice size. The paths
 * themselves: events.ts (one statement, plain PostgreSQL) and per-account-ingest.ts (one
 * transaction per account, Citus).
 */
import type { TrackedEvent } from '../../domain/model.ts';
import type { NewEvent } from '../../domain/ports/event-store.ts';

const key = (e: TrackedEvent) => `${e.pixelId}\u0000${e.eventId}`;

/** A batch split by key: within the list the first of two equal `(pixel_id, event_id)` wins. */
export interface FirstsOfBatch {
  /** The first event of each key, in arrival order: the only ones that can be stored. */
  firsts: NewEvent[];
  /** The others, in order: duplicates whatever the table holds (counted as such). */
  repeats: NewEvent[];
  /** Each first's place in `firsts`, counted from 1 (its `arrival` in INSERT_BATCH). */
  arrival: Map<NewEvent, number>;
}

export function firstsOfBatch(batch: readonly NewEvent[]): FirstsOfBatch {
  const seen = new Set<string>();
  const firsts = batch.filter((p) => {
    const k = key(p.event);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const arrival = new Map(firsts.map((p, i) => [p, i + 1]));
  const repeats = batch.length === firsts.length ? [] : batch.filter((p) => !arrival.has(p));
  return { firsts, repeats, arrival };
}

/**
 * A time sent as its epoch milliseconds (a JSON number, or a bigint parameter: cheaper to
 * write than an ISO string, and exact), back to a timestamptz; SQL NULL stays NULL.
 */
export const fromMs = (column: string) =>
  `(timestamptz 'epoch' + ${column}::bigint * interval '1 millisecond')`;

/** Longest NOTIFY payload sent (PostgreSQL refuses 8,000 bytes and more). */
export const MAX_NOTIFY_PAYLOAD = 7_000;
/** Room one seq takes in a payload: a bigint's 19 digits at most, and its comma. */
export const SEQ_ROOM = 20;
