/** Sends a built platform request over real HTTP (undici, as the engine will) and reads the answer. */
import { request as undiciRequest } from 'undici';
import { type PlatformRequest, requestUrl } from '../../src/domain/forwarding/model.ts';

export interface SentAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

export async function send(baseUrl: string, built: PlatformRequest): Promise<SentAnswer> {
  const response = await undiciRequest(requestUrl(baseUrl, built), {
    method: built.method,
    headers: built.headers,
    body: JSON.stringify(built.body),
  });
  return {
    status: response.statusCode,
    body: await response.body.text(),
    headers: response.headers,
  };
}
