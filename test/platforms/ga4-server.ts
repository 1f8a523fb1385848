/**
 * A local GA4 Measurement Protocol, honouring its documented behaviour:
 * - `POST /mp/collect?measurement_id=…&api_secret=…` always answers 2xx (204, no body), even to
 *   malformed payloads; what breaks GA4's rules (or a wrong api_secret) is silently dropped, so
 *   `events` holds only what GA4 would have kept;
 * - `POST /debug/mp/collect` answers 200 `{validationMessages: [{fieldPath, description,
 *   validationCode}]}` and keeps nothing (it does not check api_secret);
 * - rules: client_id required, ≤ 25 events, event and param names (letter first, letters,
 *   digits, _; ≤ 40; reserved names and prefixes), ≤ 25 params, string values ≤ 100 characters,
 *   object/array params only as `items`, hashed user_data as SHA-256 hex, events at most 72 h old;
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
  'ad_impression',
  'ad_query',
  'adunit_exposure',
  'app_clear_data',
  'app_install',
  'app_update',
  'app_remove',
  'error',
  'first_open',
  'first_visit',
  'in_app_purchase',
  'notification_dismiss',
  'notification_foreground',
  'notification_open',
  'notification_receive',
  'os_update',
  'screen_view',
  'session_start',
  'user_engagement',
]);
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
      if (typeof value === 'string' && [...value].length > 100) {
        messages.push({
          fieldPath: path,
          description: 'Value is longer than 100 characters.',
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
      const body = request.json as Record<string, unknown>;
      for (const event of body['events'] as Array<Record<string, unknown>>) {
        ga4.events.push({
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
