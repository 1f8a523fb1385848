import type { AttemptResult, DeliveryOutcome } from '../model.ts';

/** Retry-After is honoured on 429 and 503, but never for longer than this. */
export const MAX_RETRY_AFTER_SECONDS = 3_600;
/** An endpoint failing without a single success for this long is switched off. */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;
const JITTER = 0.2;

export interface AttemptFacts {
  /** 1 for the first attempt. */
  attempt: number;
  statusCode: number | null;
  retryAfterSeconds: number | null;
  /** Seconds between attempts after the first (TRACKWAY_WEBHOOK_RETRY_SCHEDULE). */
  schedule: number[];
  now: Date;
  /** When the endpoint's current run of failures began, if it is failing. */
  failingSince: Date | null;
  /** A number in [0, 1) for the jitter. */
  random: number;
}

/**
 * What happens after an attempt (svix's model): success ends it; 410 Gone switches the
 * endpoint off; otherwise the next step of the schedule, with at most ±20 % jitter so a fleet
 * of messages that failed together does not retry together. When the schedule is exhausted the
 * message stays as `failed`, visible and retryable by hand.
 */
export function decideNext(
  facts: AttemptFacts,
): Pick<AttemptResult, 'outcome' | 'disableEndpoint'> {
  const { statusCode } = facts;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    return { outcome: { kind: 'succeeded' } };
  }
  if (statusCode === 410) {
    return { outcome: { kind: 'failed' }, disableEndpoint: 'The endpoint answered 410 Gone' };
  }
  const failingFor = facts.failingSince ? facts.now.getTime() - facts.failingSince.getTime() : 0;
  const disableEndpoint =
    failingFor >= DISABLE_AFTER_MS ? 'The endpoint failed continuously for 5 days' : undefined;
  const step = facts.schedule[facts.attempt - 1];
  let outcome: DeliveryOutcome;
  if (step === undefined) {
    outcome = { kind: 'failed' };
  } else {
    let seconds = step * (1 + (facts.random * 2 - 1) * JITTER);
    if ((statusCode === 429 || statusCode === 503) && facts.retryAfterSeconds !== null) {
      seconds = Math.min(Math.max(facts.retryAfterSeconds, 0), MAX_RETRY_AFTER_SECONDS);
    }
    outcome = { kind: 'retry', at: new Date(facts.now.getTime() + Math.round(seconds * 1000)) };
  }
  return disableEndpoint ? { outcome, disableEndpoint } : { outcome };
}

/** `Retry-After` as seconds: either a number of seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (value === undefined || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}
