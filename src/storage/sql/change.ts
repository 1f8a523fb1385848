import type { Change } from '../../domain/ports/common.ts';
import { emit, type Query } from './query.ts';

/**
 * The read-modify-write every `update…` port method is: read the row (locked, in the caller's
 * transaction), let the domain compute the change, write it and its webhook messages. `null`
 * when there is no row; an unchanged row when the domain declined.
 */
export function* applyChange<T>(
  read: Query<T | null>,
  change: Change<T>,
  write: (next: T, before: T) => Query<unknown>,
): Query<{ before: T; after: T } | null> {
  const before = yield* read;
  if (!before) return null;
  const result = change(before);
  if (!result) return { before, after: before };
  yield* write(result.next, before);
  yield* emit(result.emit);
  return { before, after: result.next };
}
