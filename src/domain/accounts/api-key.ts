/**
 * API keys: `tw_live_` + 32 random bytes in base62 (43 characters) + a 6-character base62 CRC32
 * of everything before it. The checksum lets a typo or a guess be refused without touching
 * storage (and lets secret scanners recognise a real key); only the SHA-256 is ever stored.
 */
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { encodeBase62, encodeBase62Number } from '../ids.ts';

export const API_KEY_PREFIX = 'tw_live_';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_LENGTH = API_KEY_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
const SHAPE = /^tw_live_[0-9A-Za-z]{49}$/;

export interface NewApiKey {
  apiKey: string;
  hash: string;
  prefix: string;
  last4: string;
}

// Checked on every authenticated request: plain arithmetic, as the CRC fits in 32 bits.
function checksum(body: string): string {
  return encodeBase62Number(crc32(body) >>> 0, CHECKSUM_LENGTH);
}

export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

export function generateApiKey(): NewApiKey {
  const body = API_KEY_PREFIX + encodeBase62(randomBytes(32), BODY_LENGTH);
  const apiKey = body + checksum(body);
  return { apiKey, hash: hashApiKey(apiKey), prefix: apiKey.slice(0, 12), last4: apiKey.slice(-4) };
}

export function hasValidChecksum(candidate: string): boolean {
  if (candidate.length !== KEY_LENGTH || !SHAPE.test(candidate)) return false;
  const split = KEY_LENGTH - CHECKSUM_LENGTH;
  return checksum(candidate.slice(0, split)) === candidate.slice(split);
}
