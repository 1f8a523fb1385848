import type { PlatformRequest } from '../forwarding/model.ts';
import type { PlatformAnswer, Verdict } from '../forwarding/platform-response.ts';
import type { Platform } from '../forwarding/platforms/registry.ts';

/**
 * A request's answer; `verdict` when it was decided before the platform could answer (an OAuth
 * grant refused or unavailable: delivery/platform-sender.ts).
 */
export interface SentRequest {
  answer: PlatformAnswer;
  durationMs: number;
  verdict?: Verdict;
}

/** Sends one request to a platform at its configured base URL (delivery/platform-sender.ts). */
export interface PlatformGateway {
  /** `config`: the destination's, for a platform whose access token the service obtains. */
  send(
    platform: Platform,
    request: PlatformRequest,
    config: Record<string, unknown>,
  ): Promise<SentRequest>;
}
