/**
 * What forwarding works on and produces, independent of storage and transport: the engine loads
 * a `ForwardableEvent`, a payload builder turns a batch of them into `PlatformRequest`s (or
 * `skipped` verdicts), the engine sends each request with undici and hands the answer to the
 * platform's response classifier.
 */
import type { EventSource } from '../model.ts';
import type { Platform } from './platforms/registry.ts';

export {
  type BuildOptions,
  type BuiltBatch,
  chunk,
  type ForwardableEvent,
  maskSecret,
  type Note,
  type PlatformRequest,
  requestUrl,
  type Skip,
} from './platforms/platform.ts';

export const DESTINATION_STATES = ['active', 'failing', 'suspended'] as const;
export type DestinationState = (typeof DESTINATION_STATES)[number];

/** Where a pixel's events are forwarded (contract §12). */
export interface Destination {
  id: string;
  accountId: string;
  pixelId: string;
  type: Platform;
  name: string | null;
  /** As validated by the type's schema (platforms/<type>/config.ts), secrets in the clear. */
  config: Record<string, unknown>;
  /** Event names to forward; null: all. */
  events: string[] | null;
  /** Where the events it takes come from; null: both (`server` and `browser`). */
  sources: EventSource[] | null;
  enabled: boolean;
  state: DestinationState;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}
