/**
 * Each platform's payload builder and answer classifier, in one table the forwarding worker
 * dispatches on, so the engine has no platform-specific branches.
 */
import type { Ga4Config, MetaConfig, TiktokConfig } from './destination-config.ts';
import { buildGa4Requests } from './ga4-payload.ts';
import { classifyGa4Answer } from './ga4-response.ts';
import { buildMetaRequests } from './meta-payload.ts';
import { classifyMetaAnswer } from './meta-response.ts';
import type { BuildOptions, BuiltBatch, ForwardableEvent, PlatformRequest } from './model.ts';
import type { PlatformAnswer, Verdict } from './platform-response.ts';
import type { Platform } from './platforms.ts';
import { buildTiktokRequests } from './tiktok-payload.ts';
import { classifyTiktokAnswer } from './tiktok-response.ts';

export interface PlatformAdapter {
  build(
    events: ForwardableEvent[],
    config: Record<string, unknown>,
    options: BuildOptions,
  ): BuiltBatch;
  classify(answer: PlatformAnswer, now: Date): Verdict;
}

export const PLATFORM_ADAPTERS: Record<Platform, PlatformAdapter> = {
  // Configs were validated against the type's schema when the destination was saved.
  meta: {
    build: (events, config, options) => buildMetaRequests(events, config as MetaConfig, options),
    classify: classifyMetaAnswer,
  },
  ga4: {
    build: (events, config, options) => buildGa4Requests(events, config as Ga4Config, options),
    classify: classifyGa4Answer,
  },
  tiktok: {
    build: (events, config, options) =>
      buildTiktokRequests(events, config as TiktokConfig, options),
    classify: classifyTiktokAnswer,
  },
};

/**
 * The part `[start, end)` of a request's events as a request of its own (bisection,
 * batch-isolation.ts): Meta and TikTok both carry their events in `data`.
 */
export function subRequest(request: PlatformRequest, start: number, end: number): PlatformRequest {
  const data = request.body['data'];
  return {
    ...request,
    body: { ...request.body, data: Array.isArray(data) ? data.slice(start, end) : data },
    eventIds: request.eventIds.slice(start, end),
  };
}

/** What `event.forwarded` carries of a receipt: Meta's `fbtrace_id` and `events_received`. */
export function receiptOf(receipt: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['fbtrace_id', 'events_received', 'request_id', 'code']) {
    if (receipt[key] !== undefined) out[key] = receipt[key];
  }
  return out;
}
