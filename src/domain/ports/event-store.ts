import type { TrackedEvent, WebhookEvent } from '../model.ts';
import type { Page } from './common.ts';

export interface EventQuery extends Page {
  accountId: string;
  pixelId: string;
  eventName?: string;
  /** Inclusive bounds on the event's `timestamp`. */
  from?: Date;
  to?: Date;
}

export type InsertOutcome = 'inserted' | 'duplicate';

/** An event to store with the webhook messages it causes if it is new. */
export interface NewEvent {
  event: TrackedEvent;
  emit: WebhookEvent[];
}

export interface EventStore {
  /**
   * Commits the event (and its webhook messages) durably before resolving. `duplicate` when
   * `(pixelId, eventId)` is already stored: the first event wins and nothing is emitted.
   */
  insertEvent(event: TrackedEvent, emit: WebhookEvent[]): Promise<InsertOutcome>;
  /**
   * Commits all the events in one transaction (a batch request is one commit), with the same
   * rules as insertEvent; within the list the first of equal `(pixelId, eventId)` wins. Results
   * are in order; an event the database refuses is `rejected` alone, its neighbours are stored.
   */
  insertEvents(events: NewEvent[]): Promise<PromiseSettledResult<InsertOutcome>[]>;
  /** One stored event of the pixel, by its event id. */
  getEvent(accountId: string, pixelId: string, eventId: string): Promise<TrackedEvent | null>;
  /** Newest first: `timestamp` desc, then arrival desc. `total` counts every match. */
  listEvents(query: EventQuery): Promise<{ events: TrackedEvent[]; total: number }>;
}
