/**
 * What an event's consent (contract §16) allows a destination, before its platform's builder
 * sees the event: the rules are the same for every platform, only what a platform can honour
 * differs (`PlatformModule.consent`). What the consent becomes in the payload (GA4's `consent`,
 * Meta's `data_processing_options`, TikTok's `limited_data_use`) is the builder's.
 */
import type { Consent } from '../consent.ts';
import type {
  BuildOptions,
  BuiltBatch,
  ForwardableEvent,
  PlatformModule,
} from './platforms/platform.ts';

export const NO_CONSENT_REASON = 'no consent: the destination requires ad_user_data granted';
export const DENIED_REASON = 'consent denied: ad_user_data';

/** Why this destination may not be sent the event at all, or null. */
export function consentRefusal(
  platform: Pick<PlatformModule, 'name' | 'consent'>,
  consent: Consent | null | undefined,
  requireConsent: boolean,
): string | null {
  if (requireConsent && consent?.ad_user_data !== 'granted') return NO_CONSENT_REASON;
  if (consent?.ad_user_data === 'denied' && !platform.consent.signal) return DENIED_REASON;
  if (consent?.limited_data_use === true && !platform.consent.limitedDataUse) {
    return `limited data use: ${platform.name} has no restricted-processing mode`;
  }
  return null;
}

/** Whether the destination's config asks for `ad_user_data: "granted"` on every event. */
export function requiresConsent(config: Record<string, unknown>): boolean {
  return config['require_consent'] === true;
}

/** The destination's consent outcome for one event, in words (`/v1/track/validate`). */
export function consentOutcome(
  platform: Pick<PlatformModule, 'name' | 'consent'>,
  consent: Consent | null | undefined,
  config: Record<string, unknown>,
): string {
  const refusal = consentRefusal(platform, consent, requiresConsent(config));
  if (refusal) return `skipped: ${refusal}`;
  if (!consent) return 'no consent given: sent as usual';
  return platform.consent.describe(consent);
}

/**
 * The platform's requests for a destination's batch: events its consent rules out are
 * `skipped` with the reason, the others built by the platform.
 */
export function buildForDestination(
  platform: PlatformModule,
  config: Record<string, unknown>,
  events: ForwardableEvent[],
  options: BuildOptions,
): BuiltBatch {
  const requireConsent = requiresConsent(config);
  let allowed = events;
  const refused: BuiltBatch['skipped'] = [];
  // Most events carry no consent and most destinations require none: no copy of the batch then.
  if (requireConsent || events.some((f) => f.event.consent)) {
    allowed = [];
    for (const f of events) {
      const reason = consentRefusal(platform, f.event.consent, requireConsent);
      if (reason === null) allowed.push(f);
      else refused.push({ eventId: f.event.eventId, reason });
    }
  }
  const built = platform.build(allowed, config, options);
  return refused.length === 0 ? built : { ...built, skipped: [...refused, ...built.skipped] };
}
