/**
 * What the browser routes (`/v1/collect`, its preflight, `/v1/pixel.js`) share: they take no
 * API key, so they live outside the authenticated `/v1` scope, and answer CORS themselves.
 */
import type { FastifyReply } from 'fastify';
import { TrackwayError } from '../domain/errors.ts';

/** An origin allowed to read the answer and to send the visitor's cookies with its request. */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.headers({
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    vary: 'Origin',
  });
}

export const originRefused = (origin: string | undefined) =>
  new TrackwayError(
    'forbidden',
    origin
      ? `Origin not allowed: ${origin.slice(0, 200)} is not one of the pixel's sites`
      : "Origin header required: /v1/collect answers browsers on the pixel's own sites",
  );
