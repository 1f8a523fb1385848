import type { DestinationStore } from '../../../domain/ports/destination-store.ts';
import * as destinations from '../../queries/destinations.ts';
import type { Runner } from '../query.ts';

/** A pixel's forwarding destinations (contract §12). */
export function destinationStore({ sql: db, read, transaction }: Runner): DestinationStore {
  return {
    createDestination: (d, limit) =>
      transaction(() => destinations.createDestination(db, d, limit)),
    listDestinations: (accountId, pixelId) =>
      read(() => destinations.listDestinations(db, accountId, pixelId)),
    getDestination: (accountId, pixelId, id) =>
      read(() => destinations.getDestination(db, accountId, pixelId, id)),
    updateDestination: (accountId, pixelId, id, change) =>
      transaction(() => destinations.updateDestination(db, accountId, pixelId, id, change)),
    deleteDestination: (accountId, pixelId, id) =>
      transaction(() => destinations.deleteDestination(db, accountId, pixelId, id)),
  };
}
