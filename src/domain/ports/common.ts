/** What several ports share: a page of a list, and a change made inside the store's transaction. */

import type { WebhookEvent } from '../model.ts';

export interface Page {
  limit: number;
  offset: number;
}

/** A change computed from the current row inside the store's transaction. */
export type Change<T> = (current: T) => { next: T; emit: WebhookEvent[] } | null;
