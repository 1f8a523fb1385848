/**
 * The operator's verbs around forwarding (contract §12): one event with its full attempt
 * ledger, a replay of a time range, and the synchronous test send.
 */
import type { Context } from '../context.ts';
import { invalidField, pixelNotFound, TrackwayError } from '../errors.ts';
import { eventRecord } from '../events/list-events.ts';
import { newEventId } from '../ids.ts';
import type { TrackedEvent } from '../model.ts';
import type { ForwardStatus } from '../ports/forwarding-store.ts';
import type { PlatformGateway } from '../ports/platform-gateway.ts';
import { buildForDestination } from './consent-gate.ts';
import { existingDestination } from './destinations.ts';
import { forwardingOf, forwardingRecord } from './forwarding-record.ts';
import { maskIdentifiers, rawIdentifiers } from './mask-identifiers.ts';
import type { ForwardableEvent } from './model.ts';
import { excerpt, parseJsonObject } from './platform-response.ts';
import { platformUserData } from './platform-user-data.ts';
import type { PlatformModule, PlatformRequest } from './platforms/platform.ts';
import { platformModule } from './platforms/registry.ts';

export async function getEventWithForwarding({
  ctx,
  pixelId,
  eventId,
}: {
  ctx: Context;
  pixelId: string;
  eventId: string;
}) {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const event = await ctx.store.events.getEvent(ctx.account.id, pixelId, eventId);
  if (!event) throw new TrackwayError('not_found', `Event not found: ${eventId}`);
  const forwarding = (await forwardingOf(ctx, pixelId, [event], true)).get(eventId) ?? [];
  const record = eventRecord(event);
  return {
    ...record,
    forwarding: forwarding.map((entry) => {
      const r = forwardingRecord(entry);
      return { ...r, attempt_log: r.attempt_log ?? [] };
    }),
  };
}

const DAY_MS = 86_400_000;

/** A date alone covers that whole UTC day (as the events list reads it). */
function rangeBound(value: string, edge: 'start' | 'end', field: string): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const start = Date.parse(`${value}T00:00:00.000Z`);
    if (Number.isNaN(start)) throw invalidField(field, 'must be a date or date-time');
    return new Date(edge === 'start' ? start : start + DAY_MS - 1);
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw invalidField(field, 'must be a date or date-time');
  return new Date(at);
}

export async function replayDestination({
  ctx,
  pixelId,
  id,
  input,
}: {
  ctx: Context;
  pixelId: string;
  id: string;
  input: { start_date: string; end_date: string; statuses?: ForwardStatus[] | undefined };
}) {
  const destination = await existingDestination(ctx, pixelId, id);
  const from = rangeBound(input.start_date, 'start', 'start_date');
  const to = rangeBound(input.end_date, 'end', 'end_date');
  if (from.getTime() > to.getTime()) throw invalidField('start_date', 'must not be after end_date');
  // A switched-off destination sends nothing: queueing for it would only send the range the
  // moment it is switched on, which nobody asked for then (contract §21).
  if (!destination.enabled) {
    throw new TrackwayError(
      'conflict',
      `Destination is disabled: ${destination.id}. Enable it before replaying.`,
    );
  }
  const queued = await ctx.store.forwarding.replay({
    accountId: ctx.account.id,
    pixelId,
    destinationId: destination.id,
    from,
    to,
    statuses: input.statuses ?? ['failed', 'skipped'],
    now: ctx.clock.now(),
  });
  return { queued };
}

/** A sample event for a test send: everything Meta needs to accept a `system_generated` one. */
function sampleEvent(ctx: Context, pixelId: string): ForwardableEvent {
  const now = ctx.clock.now();
  const event: TrackedEvent = {
    accountId: ctx.account.id,
    pixelId,
    eventId: newEventId(),
    eventName: 'Purchase',
    value: 1,
    currency: 'USD',
    timestamp: now,
    receivedAt: now,
    url: 'https://shop.example.com/checkout/thank-you',
    referrer: null,
    title: null,
    searchString: null,
    userData: null,
    customData: { test: true },
  };
  return {
    event,
    actionSource: 'system_generated',
    // SHA-256 of "test@example.com": a well-formed key Meta can match on, naming nobody.
    hashes: platformUserData({
      email: '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b',
    }).hashes,
    // GA4 takes no event without a client id; a made-up one (GA's "<random>.<seconds>" form)
    // lets the test send reach GA4's validation server instead of stopping here.
    matchKeys: { gaClientId: '555000555.1700000000' },
    location: null,
  };
}

export async function testDestination({
  ctx,
  platforms,
  pixelId,
  id,
  input,
}: {
  ctx: Context;
  platforms: PlatformGateway;
  pixelId: string;
  id: string;
  input: { event?: string | undefined } | undefined;
}) {
  const destination = await existingDestination(ctx, pixelId, id);
  let forwardable: ForwardableEvent;
  if (input?.event !== undefined) {
    const [stored] = await ctx.store.matchKeys.forwardable(ctx.account.id, pixelId, [input.event]);
    if (!stored) throw new TrackwayError('not_found', `Event not found: ${input.event}`);
    forwardable = stored;
  } else {
    forwardable = sampleEvent(ctx, pixelId);
  }
  const config = destination.config;
  const testEventCode =
    typeof config['test_event_code'] === 'string' ? config['test_event_code'] : 'TEST_TRACKWAY';
  const adapter = platformModule(destination.type);
  const built = buildForDestination(adapter, config, [forwardable], {
    now: ctx.clock.now(),
    test: { testEventCode },
  });
  const request = built.requests[0];
  if (!request) {
    return {
      ok: false,
      status_code: null,
      platform_response: `not sent: ${built.skipped[0]?.reason ?? 'nothing to send'}`,
      payload: null,
    };
  }
  const raw = rawIdentifiers(forwardable);
  if (adapter.testMode === false) {
    // No test mode (Microsoft): whatever reached the platform would count as a live
    // conversion. The request was built and checked against the platform's limits; nothing
    // is sent (contract §18).
    const problem = requestProblem(adapter, request);
    return {
      ok: problem === null,
      status_code: null,
      platform_response: problem === null ? null : `not sent: ${problem}`,
      payload: maskIdentifiers(request.body, raw),
    };
  }
  const sent = await platforms.send(destination.type, request, config);
  const { answer } = sent;
  const verdict = sent.verdict ?? adapter.classify(answer, ctx.clock.now());
  const text = answer.kind === 'response' ? answer.body : answer.message;
  // What was sent and what came back, with the raw match keys masked (a platform may quote a
  // value it objects to): the answer shows no more than the record does; hashes stay hashes.
  return {
    ok: verdict.kind === 'success' && (verdict.refused ?? []).length === 0,
    status_code: answer.kind === 'response' ? answer.status : null,
    platform_response: maskIdentifiers(parseJsonObject(text) ?? excerpt(text), raw),
    payload: maskIdentifiers(request.body, raw),
  };
}

/** Why a request built for a platform without a test mode would not be taken, or null. */
function requestProblem(platform: PlatformModule, request: PlatformRequest): string | null {
  const { eventsPerRequest, bytesPerRequest } = platform.limits;
  if (request.eventIds.length > eventsPerRequest) {
    return `${request.eventIds.length} events exceed ${platform.name}'s ${eventsPerRequest} a request`;
  }
  const bytes = new TextEncoder().encode(JSON.stringify(request.body)).length;
  if (bytesPerRequest !== null && bytes > bytesPerRequest) {
    return `${bytes} bytes exceed ${platform.name}'s ${bytesPerRequest} a request`;
  }
  return null;
}
