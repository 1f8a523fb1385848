/** Forwarding to ad platforms (contract §12). */

import type { Destination } from '../forwarding/model.ts';

export interface DestinationStore {
  /** Creates it unless the pixel already has `limit` destinations (checked atomically). */
  createDestination(destination: Destination, limit: number): Promise<'created' | 'limit_exceeded'>;
  /** Oldest first. */
  listDestinations(accountId: string, pixelId: string): Promise<Destination[]>;
  getDestination(accountId: string, pixelId: string, id: string): Promise<Destination | null>;
  /** Applies `change` atomically (`null`: no change); `null` when there is no such destination. */
  updateDestination(
    accountId: string,
    pixelId: string,
    id: string,
    change: (current: Destination) => Destination | null,
  ): Promise<{ before: Destination; after: Destination } | null>;
  /** Removes it and its jobs; `false` when there is none. */
  deleteDestination(accountId: string, pixelId: string, id: string): Promise<boolean>;
}
