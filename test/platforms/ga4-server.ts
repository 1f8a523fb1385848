/**
 * A local GA4 Measurement Protocol, honouring its documented behaviour:
 * - `POST /mp/collect?measurement_id=…&api_secret=…` always answers 2xx (204, no body), even to
 *   malformed payloads; what breaks GA4's rules (or a wrong api_secret) is silently dropped, so
 *   `events` holds only what GA4 would have kept;
 * - `POST /debug/mp/collect` answers 200 `{validationMessages: [{fieldPath, description,
 *   validationCode}]}` and keeps nothing (it does not check api_secret);
 * - rules: client_id required, ≤ 25 events, event and param names (letter first, letters,
 *   digits, _; ≤ 40; reserved names and prefixes), ≤ 25 params, string values ≤ 100 characters,
 *   object/array params only as `items`, hashed user_data as SHA-256 hex, events at most 72 h old,
 *   consent values GRANTED or DENIED, bodies under 130 kB; user_data without a user_id is
 *   ignored;
 * - modes: `down` (HTTP 503), `hang`.
 */
import {
  type Answer,
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface ValidationMessage {
  fieldPath: string;
  description: string;
  validationCode: string;
}

export interface Ga4Server extends PlatformServer {
  measurementId: string;
  apiSecret: string;
  /** Events GA4 would have kept, each with its request's client_id and user_id. */
  events: Array<{
    client_id: string;
    user_id?: string;
    name: string;
    params: Record<string, unknown>;
    /** The rest of its request (consent, user_data, ip_override, user_agent …). */
    request: Record<string, unknown>;
  }>;
  now: () => number;
}

// GA4's name rules, restated here on purpose rather than imported from
// src/domain/forwarding/event-names.ts: the stand-in must judge our payloads by the platform's
// documented rules, so a mistake in our mapping cannot also hide in the judge.
const NAME = /^\p{L}[\p{L}\p{N}_]*$/u;
const RESERVED_PREFIXES = ['_', 'firebase_', 'ga_', 'google_', 'gtag.'];
const RESERVED_EVENTS = new Set([
  'ad_activeview',
  'ad_click',
  'ad_exposure',
  'ad_query',
  'ad_reward',
  'adunit_exposure',
  'app_clear_data',
  'app_exception',
  'app_install',
  'app_remove',
  'app_store_refund',
  'app_update',
  'app_upgrade',
  'dynamic_link_app_open',
  'dynamic_link_app_update',
  'dynamic_link_first_open',
  'error',
  'firebase_campaign',
  'firebase_in_app_message_action',
  'firebase_in_app_message_dismiss',
  'firebase_in_app_message_impression',
  'first_open',
  'first_visit',
  'notification_dismiss',
  'notification_foreground',
  'notification_open',
  'notification_receive',
  'notification_send',
  'os_update',
  'session_start',
  'user_engagement',
  // Only allowed for app streams; a destination here is a web stream.
  'ad_impression',
  'in_app_purchase',
  'screen_view',
]);
/** Longer values allowed for the page params (support.google.com/analytics/answer/9267744). */
const PARAM_LIMITS: Record<string, number> = {
  page_location: 1000,
  page_referrer: 420,
  page_title: 300,
};
const SEVENTY_TWO_HOURS_US = 72 * 3600 * 1_000_000;

function nameMessage(path: string, name: unknown, reserved: Set<string>): ValidationMessage | null {
  if (typeof name !== 'string' || name.length === 0 || name.length > 40 || !NAME.test(name)) {
    return {
      fieldPath: path,
      description: `Name "${String(name)}" is invalid.`,
      validationCode: 'NAME_INVALID',
    };
  }
  if (reserved.has(name) || RESERVED_PREFIXES.some((p) => name.startsWith(p))) {
    return {
      fieldPath: path,
      description: `Name "${name}" is reserved.`,
      validationCode: 'NAME_RESERVED',
    };
  }
  return null;
}

/** Every rule a payload breaks, as GA4's validation server reports them. */
export function validateGa4Payload(payload: unknown, nowMs: number): ValidationMessage[] {
  const messages: ValidationMessage[] = [];
  if (typeof payload !== 'object' || payload === null) {
    return [
      {
        fieldPath: '',
        description: 'Unable to parse the payload as JSON.',
        validationCode: 'VALUE_INVALID',
      },
    ];
  }
  const body = payload as Record<string, unknown>;
  if (typeof body['client_id'] !== 'string' || body['client_id'] === '') {
    messages.push({
      fieldPath: 'client_id',
      description: 'client_id is required.',
      validationCode: 'VALUE_REQUIRED',
    });
  }
  const events = body['events'];
  if (!Array.isArray(events) || events.length === 0) {
    messages.push({
      fieldPath: 'events',
      description: 'events is required.',
      validationCode: 'VALUE_REQUIRED',
    });
    return messages;
  }
  if (events.length > 25) {
    messages.push({
      fieldPath: 'events',
      description: 'A request may hold at most 25 events.',
      validationCode: 'EXCEEDED_MAX_ENTITIES',
    });
  }
  // Consent Mode (protocol/ga4/reference#payload_consent): GRANTED or DENIED, nothing else.
  const consent = body['consent'];
  if (consent !== undefined) {
    const c = (typeof consent === 'object' && consent !== null ? consent : {}) as Record<
      string,
      unknown
    >;
    for (const [key, value] of Object.entries(c)) {
      if (!['ad_user_data', 'ad_personalization'].includes(key)) {
        messages.push({
          fieldPath: `consent.${key}`,
          description: 'Unknown consent field.',
          validationCode: 'VALUE_INVALID',
        });
      } else if (value !== 'GRANTED' && value !== 'DENIED') {
        messages.push({
          fieldPath: `consent.${key}`,
          description: 'Must be GRANTED or DENIED.',
          validationCode: 'VALUE_INVALID',
        });
      }
    }
  }
  const userData = body['user_data'] as Record<string, unknown> | undefined;
  for (const key of ['sha256_email_address', 'sha256_phone_number']) {
    const values = userData?.[key];
    if (values !== undefined && !(Array.isArray(values) && values.every(isSha256Hex))) {
      messages.push({
        fieldPath: `user_data.${key}`,
        description: 'Must be SHA-256 hex.',
        validationCode: 'VALUE_INVALID',
      });
    }
  }
  events.forEach((event: Record<string, unknown>, i) => {
    const nameProblem = nameMessage(`events[${i}].name`, event['name'], RESERVED_EVENTS);
    if (nameProblem) messages.push(nameProblem);
    const micros = event['timestamp_micros'] ?? body['timestamp_micros'];
    if (typeof micros === 'number' && nowMs * 1000 - micros > SEVENTY_TWO_HOURS_US) {
      messages.push({
        fieldPath: `events[${i}].timestamp_micros`,
        description: 'Events may be backdated by at most 72 hours.',
        validationCode: 'VALUE_OUT_OF_BOUNDS',
      });
    }
    const params = (event['params'] ?? {}) as Record<string, unknown>;
    const keys = Object.keys(params);
    if (keys.length > 25) {
      messages.push({
        fieldPath: `events[${i}].params`,
        description: 'An event may hold at most 25 params.',
        validationCode: 'EXCEEDED_MAX_ENTITIES',
      });
    }
    for (const key of keys) {
      const path = `events[${i}].params.${key}`;
      const problem = nameMessage(path, key, new Set());
      if (problem) messages.push(problem);
      const value = params[key];
      const limit = PARAM_LIMITS[key] ?? 100;
      if (typeof value === 'string' && [...value].length > limit) {
        messages.push({
          fieldPath: path,
          description: `Value is longer than ${limit} characters.`,
          validationCode: 'VALUE_OUT_OF_BOUNDS',
        });
      }
      if (key !== 'items' && typeof value === 'object' && value !== null) {
        messages.push({
          fieldPath: path,
          description: 'Only items may be an array or object.',
          validationCode: 'VALUE_INVALID',
        });
      }
    }
  });
  return messages;
}

export async function startGa4Server(
  options: { measurementId?: string; apiSecret?: string } = {},
): Promise<Ga4Server> {
  const handle = (request: ReceivedRequest): Answer => {
    if (request.method !== 'POST') return { status: 405 };
    const messages = validateGa4Payload(request.json, ga4.now());
    // A body of 130 kB or more is dropped (sending-events#limitations).
    if (Buffer.byteLength(request.body) >= 130_000) {
      messages.push({
        fieldPath: '',
        description: 'The request body is 130 kB or more.',
        validationCode: 'EXCEEDED_MAX_ENTITIES',
      });
    }
    if (request.query.get('measurement_id') !== ga4.measurementId) {
      messages.push({
        fieldPath: 'measurement_id',
        description: 'Unknown measurement_id.',
        validationCode: 'VALUE_INVALID',
      });
    }
    if (request.path === '/debug/mp/collect')
      return { status: 200, body: { validationMessages: messages } };
    if (request.path !== '/mp/collect') return { status: 404 };
    if (messages.length === 0 && request.query.get('api_secret') === ga4.apiSecret) {
      const { events, ...head } = request.json as Record<string, unknown>;
      // user_data without a user_id is ignored (ga4/uid-data): GA4 keeps the events without it.
      if (head['user_id'] === undefined) delete head['user_data'];
      const body: Record<string, unknown> = { events, ...head };
      for (const event of body['events'] as Array<Record<string, unknown>>) {
        ga4.events.push({
          request: head,
          client_id: body['client_id'] as string,
          ...(typeof body['user_id'] === 'string' ? { user_id: body['user_id'] } : {}),
          name: event['name'] as string,
          params: (event['params'] ?? {}) as Record<string, unknown>,
        });
      }
    }
    return { status: 204 };
  };
  const base = await startPlatformServer(handle, () => ({ status: 503 }));
  const ga4: Ga4Server = Object.assign(base, {
    measurementId: options.measurementId ?? 'G-TEST123',
    apiSecret: options.apiSecret ?? 'ga4-secret-0002',
    events: [],
    now: () => Date.now(),
  });
  return ga4;
}
