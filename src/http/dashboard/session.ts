/**
 * Dashboard sessions: signing in takes an API key once and leaves only a random session token
 * in an `HttpOnly`, `SameSite=Strict` cookie (the key never reaches the page or browser
 * storage). The store keeps the token's SHA-256, so sessions work on every instance and signing
 * out (or revoking the key) ends them server-side.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TrackwayError } from '../../domain/errors.ts';
import type { Clock } from '../../domain/ports/clock.ts';
import type { SessionStore } from '../../domain/ports/session-store.ts';

export const SESSION_COOKIE = 'tw_session';
/** A session lasts a working day; signing in again is cheap. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const COOKIE_PATH = '/dashboard';

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function sessionToken(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || null;
  }
  return null;
}

/** The SHA-256 the store keeps of the request's session token, or null without one. */
export function sessionTokenHash(request: FastifyRequest): string | null {
  const token = sessionToken(request);
  return token === null ? null : hashToken(token);
}

function cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  // Secure whenever the browser reached us over https (directly or via a trusted proxy).
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

export async function startSession(
  sessions: SessionStore,
  clock: Clock,
  request: FastifyRequest,
  reply: FastifyReply,
  key: { accountId: string; keyId: string },
): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  const now = clock.now();
  await sessions.createSession({
    tokenHash: hashToken(token),
    accountId: key.accountId,
    keyId: key.keyId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
  });
  reply.header('set-cookie', cookie(request, token, SESSION_TTL_MS / 1000));
}

export async function findSession(sessions: SessionStore, clock: Clock, request: FastifyRequest) {
  const token = sessionToken(request);
  return token === null ? null : sessions.findSession(hashToken(token), clock.now());
}

export async function endSession(
  sessions: SessionStore,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const token = sessionToken(request);
  if (token !== null) await sessions.deleteSession(hashToken(token));
  reply.header('set-cookie', cookie(request, '', 0));
}

/**
 * CSRF: besides SameSite=Strict, a state-changing request must come from a page of this origin.
 * Browsers send `Sec-Fetch-Site` (or at least `Origin`) on every POST; a request with neither
 * is not from a browser form of ours and is refused too.
 */
export function assertSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site === 'same-origin') return;
    throw new TrackwayError('forbidden', 'Cross-site request refused');
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin === `${request.protocol}://${request.host}`) return;
  throw new TrackwayError('forbidden', 'Cross-site request refused');
}
