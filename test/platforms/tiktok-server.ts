/**
 * A local TikTok Events API (v1.3), honouring its documented behaviour:
 * - `POST /event/track/` with the `Access-Token` header and `{event_source, event_source_id,
 *   test_event_code?, data: [...]}`;
 * - refusals arrive as HTTP 200 with a body `code` (0 = OK): 40105 invalid token, 40001 no
 *   permission for the pixel, 40002 validation error (the whole request, e.g. more than 1,000
 *   events or one event without `event`/`event_time`), 40100 too many requests;
 * - hashed user fields must be SHA-256 hex; ip, user_agent, ttclid, ttp arrive raw;
 * - dedup by (event, event_id);
 * - modes: `expired` (40105), `throttled` (40100), `down` (HTTP 500), `hang`.
 */
import {
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface TiktokServer extends Omit<PlatformServer, 'mode'> {
  url: string;
  mode: PlatformServer['mode'] | 'expired' | 'throttled';
  pixelCode: string;
  accessToken: string;
  events: Array<Record<string, unknown>>;
  duplicates: number;
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
  /** Codes to answer the next requests with, one each, before judging them (40700 …). */
  answerNext: number[];
}

const HASHED = ['email', 'phone', 'external_id', 'first_name', 'last_name', 'zip_code'];
let requestIds = 0;

export async function startTiktokServer(
  options: { pixelCode?: string; accessToken?: string } = {},
): Promise<TiktokServer> {
  const kept = new Set<string>();
  const reply = (code: number, message: string) => ({
    status: 200,
    body: { code, message, request_id: `req${++requestIds}`, data: {} },
  });
  const handle = (request: ReceivedRequest) => {
    if (request.method !== 'POST' || request.path !== '/open_api/v1.3/event/track/')
      return { status: 404 };
    if (request.headers['access-token'] !== tiktok.accessToken || tiktok.mode === 'expired') {
      return reply(40105, 'The access token is invalid or has been revoked.');
    }
    if (tiktok.mode === 'throttled')
      return reply(40100, 'Too many requests. Please retry in some time.');
    const next = tiktok.answerNext.shift();
    // 40700: TikTok's temporary internal error; the same request succeeds when sent again.
    if (next !== undefined) return reply(next, 'Internal error, please retry.');
    const body = request.json as Record<string, unknown> | undefined;
    if (body?.['event_source_id'] !== tiktok.pixelCode) {
      return reply(40001, 'No permission to operate pixel code.');
    }
    if (body['event_source'] !== 'web')
      return reply(40002, 'event_source: Must be one of web, app, offline, crm.');
    const data = body['data'];
    if (!Array.isArray(data) || data.length === 0)
      return reply(40002, 'data: Missing data for required field.');
    if (data.length > 1_000) return reply(40002, 'data: Length must be between 1 and 1000.');
    for (const [i, event] of (data as Array<Record<string, unknown>>).entries()) {
      if (typeof event['event'] !== 'string')
        return reply(40002, `data.${i}.event: Missing data for required field.`);
      if (!Number.isInteger(event['event_time']))
        return reply(40002, `data.${i}.event_time: Not a valid integer.`);
      const user = (event['user'] ?? {}) as Record<string, unknown>;
      for (const key of HASHED) {
        if (user[key] !== undefined && !isSha256Hex(user[key])) {
          return reply(40002, `data.${i}.user.${key}: Must be SHA-256 hashed.`);
        }
      }
      const ldu = event['limited_data_use'];
      if (ldu !== undefined && typeof ldu !== 'boolean')
        return reply(40002, `data.${i}.limited_data_use: Not a valid boolean.`);
      const own = tiktok.rejectEvent?.(event);
      if (own) return reply(40002, `data.${i}: ${own}`);
    }
    for (const event of data as Array<Record<string, unknown>>) {
      const key = `${event['event']}\u0000${event['event_id']}`;
      if (event['event_id'] !== undefined && kept.has(key)) {
        tiktok.duplicates += 1;
        continue;
      }
      kept.add(key);
      tiktok.events.push(event);
    }
    return reply(0, 'OK');
  };
  const base = await startPlatformServer(handle, () => ({
    status: 500,
    body: { code: 50000, message: 'Internal error' },
  }));
  const tiktok: TiktokServer = Object.assign(base as unknown as TiktokServer, {
    url: `${base.origin}/open_api/v1.3`,
    pixelCode: options.pixelCode ?? 'C0TESTPIXEL0001',
    accessToken: options.accessToken ?? 'tt-access-token-0003',
    events: [],
    duplicates: 0,
    answerNext: [],
  });
  return tiktok;
}
