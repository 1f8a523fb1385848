/**
 * What forwarding works on and produces, independent of storage and transport: the engine loads
 * a `ForwardableEvent`, a payload builder turns a batch of them into `PlatformRequest`s (or
 * `skipped` verdicts), the engine sends each request with undici and hands the answer to the
 * platform's response classifier.
 */
import type { TrackedEvent } from '../model.ts';
import type { ActionSource, RawMatchKeys } from './match-keys.ts';
import type { PlatformHashes, PlatformLocation } from './platform-user-data.ts';
import type { Platform } from './platforms.ts';

export const DESTINATION_STATES = ['active', 'failing', 'suspended'] as const;
export type DestinationState = (typeof DESTINATION_STATES)[number];

/** Where a pixel's events are forwarded (contract §12). */
export interface Destination {
  id: string;
  accountId: string;
  pixelId: string;
  type: Platform;
  name: string | null;
  /** As validated by the type's schema (destination-config.ts), secrets in the clear. */
  config: Record<string, unknown>;
  /** Event names to forward; null: all. */
  events: string[] | null;
  enabled: boolean;
  state: DestinationState;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ForwardableEvent {
  event: TrackedEvent;
  /** Contract §11's `action_source` (default `website`), kept with the record. */
  actionSource: ActionSource;
  /** The platforms' hashes, kept with the event. */
  hashes: PlatformHashes;
  /**
   * The raw match keys and unhashed location, or null once erased (7 days after the event's
   * timestamp): the event can then still go out, with hashes only.
   */
  matchKeys: RawMatchKeys | null;
  location: PlatformLocation | null;
}

export interface PlatformRequest {
  method: 'POST';
  /** Path and query, appended to the platform's base URL (`TRACKWAY_META_API_URL` …). */
  path: string;
  /** `path` with secrets masked: the only form fit for logs and the attempt ledger. */
  redactedPath: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The events the request carries, in body order (for bisection and the ledger). */
  eventIds: string[];
}

/** An event this destination will not be sent, and why (the outcome's `reason`). */
export interface Skip {
  eventId: string;
  reason: string;
}

/** Something changed on the way out that the ledger should show (GA4's dropped params). */
export interface Note {
  eventId: string;
  note: string;
}

export interface BuiltBatch {
  requests: PlatformRequest[];
  skipped: Skip[];
  notes: Note[];
}

export interface BuildOptions {
  /** Window checks are made against this time. */
  now: Date;
  /** A test send: Meta/TikTok use this `test_event_code`; GA4 goes to `/debug/mp/collect`. */
  test?: { testEventCode?: string };
}

/** Appends a path (which may hold a query) to a base URL that may itself end in a path. */
export function requestUrl(baseUrl: string, request: Pick<PlatformRequest, 'path'>): string {
  return baseUrl.replace(/\/+$/, '') + request.path;
}

/** Splits a list into consecutive chunks of at most `size`. */
export function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Below this length a secret is masked whole: showing the last four of a short secret would show
 * most of it (all of one of four characters or fewer).
 */
const SHOW_LAST4_FROM = 8;

/** A secret as responses and logs may show it: `****` and its last four characters. */
export function maskSecret(secret: string): string {
  return secret.length < SHOW_LAST4_FROM ? '****' : `****${secret.slice(-4)}`;
}
