/**
 * `POST /v1/track/validate` (contract §12): what `/v1/track` would store for a body and what each
 * of the pixel's destinations would be sent. A debugging aid: the same validation and hashing as
 * the track call and the forwarding worker's own payload builders, so the answer cannot drift
 * from what really happens. Nothing is stored or sent.
 */
import { type Context, trackingLookup } from '../context.ts';
import { buildForDestination, consentOutcome } from '../forwarding/consent-gate.ts';
import { DEFAULT_ACTION_SOURCE } from '../forwarding/match-keys.ts';
import type { Destination, ForwardableEvent } from '../forwarding/model.ts';
import { type Platform, platformModule } from '../forwarding/platforms/registry.ts';
import type { KeyScope, TrackedEvent } from '../model.ts';
import { eventRecord } from './list-events.ts';
import { assertTrackable, eventWarnings, prepareEvent } from './track-event.ts';

export interface DestinationVerdict {
  destination_id: string;
  platform: Platform;
  would_forward: boolean;
  reason?: string;
  /** What the event's consent means for this destination (contract §16). */
  consent: string;
  /** The request body only: Meta's token (query) and TikTok's (header) are never in it. */
  payload: Record<string, unknown> | null;
}

/** The event as the forwarding worker loads it back from the store right after the insert. */
export function forwardableOf(event: TrackedEvent): ForwardableEvent {
  const ingested = event.ingested;
  return {
    event,
    actionSource: event.actionSource ?? DEFAULT_ACTION_SOURCE,
    hashes: ingested?.hashes ?? {},
    matchKeys: ingested?.matchKeys ?? null,
    location: ingested?.location ?? null,
  };
}

/**
 * One destination's verdict, checked in the order the engine applies them: the fan-out (enabled,
 * events filter) makes no job, a suspended destination holds its jobs, then the platform's
 * builder skips what it cannot send (GA4 without a client id, outside a window …).
 */
export function destinationVerdict(
  destination: Destination,
  forwardable: ForwardableEvent,
  now: Date,
): DestinationVerdict {
  const platform = platformModule(destination.type);
  const built = buildForDestination(platform, destination.config, [forwardable], { now });
  const payload = built.requests[0]?.body ?? null;
  const base = {
    destination_id: destination.id,
    platform: destination.type,
    consent: consentOutcome(platform, forwardable.event.consent, destination.config),
    payload,
  };
  const name = forwardable.event.eventName;
  if (!destination.enabled) {
    return { ...base, would_forward: false, reason: 'The destination is disabled' };
  }
  if (destination.events !== null && !destination.events.includes(name)) {
    return {
      ...base,
      would_forward: false,
      reason: `event_name ${name} is not in the destination's events filter`,
    };
  }
  const skipped = built.skipped[0];
  if (skipped) return { ...base, would_forward: false, reason: skipped.reason };
  if (destination.state === 'suspended') {
    return {
      ...base,
      would_forward: false,
      reason: `The destination is suspended (${destination.lastError ?? 'credentials refused'}); events wait until it is resumed`,
    };
  }
  return { ...base, would_forward: true };
}

/**
 * `scope` is the calling key's: an `ingest` key (code that runs where a key can leak) learns
 * whether its event is valid and how it is stored, not the account's destinations (their ids,
 * the platforms' pixel codes and measurement ids, suspension messages).
 */
export async function validateEvent({
  ctx,
  input,
  scope = 'full',
}: {
  ctx: Context;
  input: unknown;
  scope?: KeyScope;
}) {
  const now = ctx.clock.now();
  const event = prepareEvent(ctx.account.id, input, now);
  assertTrackable(await trackingLookup(ctx)(ctx.account.id, event.pixelId), event.pixelId);
  if (scope === 'ingest') return { valid: true as const, event: eventRecord(event) };
  const destinations = await ctx.store.destinations.listDestinations(ctx.account.id, event.pixelId);
  const forwardable = forwardableOf(event);
  const warnings = eventWarnings(event);
  return {
    valid: true as const,
    event: eventRecord(event),
    destinations: destinations.map((d) => destinationVerdict(d, forwardable, now)),
    // The very warnings /v1/track would answer with (a near-miss name, dropped values).
    ...(warnings.length > 0 && { warnings }),
  };
}
