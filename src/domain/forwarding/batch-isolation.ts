/**
 * One invalid event must never fail the others of its batch (contract §12), but Meta rejects a
 * whole request for one invalid event ("If any event you send in a batch is invalid, we reject
 * the entire batch"), and TikTok is reported to do the same. Neither documents which event was
 * at fault: Meta's error carries no index (no `error_data` pointing into `data` is documented),
 * and its message names a parameter, not a position. So a refused batch is bisected: each half
 * is sent again, halves that pass are forwarded, halves that fail are split again, and a single
 * event that is still refused is `failed` with the platform's message. One bad event among
 * 1,000 costs at most 2 × ⌈log2 1000⌉ = 20 extra requests; k bad events at most 20k.
 */

import type { Verdict } from './platform-response.ts';
import type { PlatformModule } from './platforms/platform.ts';

export type Isolation =
  /** Nothing to isolate: apply the verdict to every event of the request. */
  | { kind: 'apply' }
  /** The request held one event: that event is `failed` with the platform's message. */
  | { kind: 'fail-event'; message: string }
  /** Resend these index ranges of the request's events ([start, end), in order) as requests of their own. */
  | { kind: 'split'; parts: Array<[number, number]> };

export function isolateRefusal(
  platform: Pick<PlatformModule, 'subRequest'>,
  verdict: Verdict,
  eventCount: number,
): Isolation {
  // A platform that never refuses one event of a request (GA4 answers 2xx to anything) has no
  // way to cut a request; transient and auth verdicts concern the request or the destination,
  // not one event.
  if (platform.subRequest === undefined || verdict.kind !== 'permanent') return { kind: 'apply' };
  if (eventCount <= 1) return { kind: 'fail-event', message: verdict.message };
  const middle = Math.ceil(eventCount / 2);
  return {
    kind: 'split',
    parts: [
      [0, middle],
      [middle, eventCount],
    ],
  };
}
