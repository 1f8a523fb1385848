/**
 * A local Meta Conversions API, honouring its documented contract closely enough that tests of
 * forwarding can fail for the reasons production would:
 * - `POST /{version}/{pixel_id}/events` with `{data: [...], test_event_code?}`, the token as
 *   `Authorization: Bearer …` or `?access_token=…`;
 * - 1 to 1,000 events a request; one invalid event rejects the whole request (HTTP 400,
 *   `{error: {message, type, code, error_subcode, is_transient, error_user_title,
 *   error_user_msg, fbtrace_id}}`), so nothing of it is kept;
 * - an event older than 7 days (62 for physical_store): code 100, subcode 2804003 ("Event
 *   Timestamp Too Old"); an app event without app_data; data_processing_options other than
 *   `[]` or `["LDU"]` with valid country and state;
 * - website events need `client_user_agent` and `event_source_url`; hashed keys must be SHA-256;
 * - success: `{events_received, messages: [], fbtrace_id}`;
 * - dedup: a repeat of (event_name, event_id) is received but not kept twice;
 * - modes: `expired` (code 190, the token expired), `throttled` (code 17, is_transient),
 *   `down` (HTTP 500, code 2, is_transient), `hang` (never answers).
 */
import {
  type Answer,
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export const META_VERSION = 'v24.0';
const SEVEN_DAYS_S = 7 * 24 * 3600;
const ACTION_SOURCES = new Set([
  'website',
  'app',
  'email',
  'phone_call',
  'chat',
  'physical_store',
  'system_generated',
  'other',
]);
const HASHED = ['em', 'ph', 'fn', 'ln', 'ct', 'st', 'zp', 'country', 'external_id', 'ge', 'db'];

export interface MetaServer extends Omit<PlatformServer, 'mode'> {
  /** The base URL to use as `TRACKWAY_META_API_URL` (origin + version). */
  url: string;
  mode: PlatformServer['mode'] | 'expired' | 'throttled';
  pixelId: string;
  accessToken: string;
  /** Every event kept, deduplicated by (event_name, event_id), in arrival order. */
  events: Array<Record<string, unknown>>;
  /** Events received again under an (event_name, event_id) already kept. */
  duplicates: number;
  /** A test's own reason to find an event invalid (a poisoned event), or undefined. */
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
  now: () => number;
}

let traces = 0;
const fbtrace = () => `A${(++traces).toString(36).padStart(10, 'x')}`;

function metaError(status: number, error: Record<string, unknown>): Answer {
  return {
    status,
    body: {
      error: { type: 'OAuthException', is_transient: false, fbtrace_id: fbtrace(), ...error },
    },
  };
}

function invalid(message: string, subcode?: number, title = 'Invalid parameter'): Answer {
  return metaError(400, {
    message: 'Invalid parameter',
    code: 100,
    ...(subcode !== undefined ? { error_subcode: subcode } : {}),
    error_user_title: title,
    error_user_msg: message,
  });
}

function eventProblem(
  event: Record<string, unknown>,
  nowS: number,
): { message: string; subcode?: number; title?: string } | null {
  if (typeof event['event_name'] !== 'string' || event['event_name'] === '') {
    return { message: 'The parameter event_name is required.' };
  }
  const time = event['event_time'];
  if (typeof time !== 'number' || !Number.isInteger(time)) {
    return { message: 'The parameter event_time must be a Unix timestamp in seconds.' };
  }
  // 7 days, but 62 for physical_store events (conversions-api/using-the-api).
  const window = event['action_source'] === 'physical_store' ? 62 * 24 * 3600 : SEVEN_DAYS_S;
  if (time < nowS - window) {
    return {
      message:
        'The timestamp for this event is too far in the past: event_time must be within the last 7 days.',
      subcode: 2804003,
      title: 'Event Timestamp Too Old',
    };
  }
  const source = event['action_source'];
  if (typeof source !== 'string' || !ACTION_SOURCES.has(source)) {
    return { message: 'The parameter action_source is required and must be a valid value.' };
  }
  if (source === 'app' && (typeof event['app_data'] !== 'object' || event['app_data'] === null)) {
    return { message: 'The parameter app_data is required for app events.' };
  }
  const userData = event['user_data'];
  if (typeof userData !== 'object' || userData === null || Object.keys(userData).length === 0) {
    return {
      message: 'You must provide at least one customer information parameter in user_data.',
    };
  }
  const ud = userData as Record<string, unknown>;
  for (const key of HASHED) {
    const value = ud[key];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (!values.every(isSha256Hex))
      return { message: `The parameter user_data.${key} must be hashed.` };
  }
  // Data processing options (developers.facebook.com/docs/marketing-apis/data-processing-options):
  // `[]` or `["LDU"]`; with LDU, country 1 (US) or 0 (geolocate), state 0 or a state code 1000+.
  const dpo = event['data_processing_options'];
  if (dpo !== undefined) {
    if (!Array.isArray(dpo) || dpo.some((o) => o !== 'LDU')) {
      return { message: 'The parameter data_processing_options must be [] or ["LDU"].' };
    }
    if (dpo.length > 0) {
      const country = event['data_processing_options_country'];
      const state = event['data_processing_options_state'];
      if (country !== undefined && country !== 0 && country !== 1) {
        return { message: 'data_processing_options_country must be 0 or 1.' };
      }
      if (
        state !== undefined &&
        state !== 0 &&
        !(Number.isInteger(state) && Number(state) >= 1000)
      ) {
        return { message: 'data_processing_options_state must be 0 or a state code.' };
      }
    }
  }
  if (source === 'website') {
    if (typeof ud['client_user_agent'] !== 'string') {
      return { message: 'The parameter client_user_agent is required for website events.' };
    }
    if (typeof event['event_source_url'] !== 'string') {
      return { message: 'The parameter event_source_url is required for website events.' };
    }
  }
  return null;
}

export async function startMetaServer(
  options: { pixelId?: string; accessToken?: string } = {},
): Promise<MetaServer> {
  const pixelId = options.pixelId ?? '1234567890';
  const accessToken = options.accessToken ?? 'EAAB-test-token-0001';
  const kept = new Set<string>();

  const handle = (request: ReceivedRequest): Answer => {
    const match = /^\/(v\d+\.\d+)\/(\d+)\/events$/.exec(request.path);
    if (request.method !== 'POST' || !match) {
      return metaError(400, { message: 'Unsupported post request.', code: 100, error_subcode: 33 });
    }
    // The Graph API takes the token as `access_token` or as an OAuth bearer token.
    const bearer = /^Bearer (.+)$/.exec(String(request.headers['authorization'] ?? ''))?.[1];
    const token = bearer ?? request.query.get('access_token');
    if (token === null) {
      return metaError(400, {
        message: 'An access token is required to request this resource.',
        code: 104,
      });
    }
    if (token !== meta.accessToken) {
      return metaError(400, {
        message: 'Invalid OAuth access token - Cannot parse access token',
        code: 190,
      });
    }
    if (meta.mode === 'expired') {
      return metaError(400, {
        message: 'Error validating access token: Session has expired.',
        code: 190,
        error_subcode: 463,
      });
    }
    if (meta.mode === 'throttled') {
      return metaError(400, {
        message: 'User request limit reached',
        code: 17,
        is_transient: true,
      });
    }
    if (match[2] !== meta.pixelId) {
      return metaError(400, {
        message: `Unsupported post request. Object with ID '${match[2]}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        code: 100,
        error_subcode: 33,
      });
    }
    const body = request.json as { data?: unknown } | undefined;
    const data = body?.data;
    if (!Array.isArray(data) || data.length === 0)
      return invalid('The parameter data is required.');
    if (data.length > 1_000) {
      return invalid('A batch may hold at most 1000 events.', undefined, 'Too many events');
    }
    const nowS = Math.floor(meta.now() / 1000);
    for (const event of data as Array<Record<string, unknown>>) {
      const problem = eventProblem(event, nowS);
      if (problem) return invalid(problem.message, problem.subcode, problem.title);
      const own = meta.rejectEvent?.(event);
      if (own) return invalid(own);
    }
    for (const event of data as Array<Record<string, unknown>>) {
      const key = `${event['event_name']}\u0000${event['event_id']}`;
      if (event['event_id'] !== undefined && kept.has(key)) {
        meta.duplicates += 1;
        continue;
      }
      kept.add(key);
      meta.events.push(event);
    }
    return {
      status: 200,
      body: { events_received: data.length, messages: [], fbtrace_id: fbtrace() },
    };
  };

  const base = await startPlatformServer(
    (request) => handle(request),
    () =>
      metaError(500, {
        message: 'An unexpected error has occurred. Please retry your request later.',
        code: 2,
        is_transient: true,
      }),
  );
  const meta: MetaServer = Object.assign(base as unknown as MetaServer, {
    url: `${base.origin}/${META_VERSION}`,
    pixelId,
    accessToken,
    events: [],
    duplicates: 0,
    now: () => Date.now(),
  });
  return meta;
}
