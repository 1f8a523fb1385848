/** Identifiers, in the forms contract §1 fixes. */
import { randomBytes, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62: bytes ≥ 248 are rejected rather than folded, so no character is favoured. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** The bytes as one big-endian integer in base62, left-padded with '0' to `width`. */
export function encodeBase62(bytes: Uint8Array, width: number): string {
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, '0');
}

/** `encodeBase62` for a whole number below 2^53, in plain arithmetic (no BigInt). */
export function encodeBase62Number(value: number, width: number): string {
  let n = value;
  let out = '';
  while (n > 0) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(width, '0');
}

export type IdPrefix = 'acct' | 'px' | 'wh' | 'key' | 'att' | 'dst';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(16)}`;
}

let lastMs = -1;
let sequence = 0;

/**
 * Random bytes for uuidv7, drawn from the system's generator 4 kB at a time: one call into it
 * per 256 ids instead of one each. Every PostgreSQL ingest batch makes a message id for each
 * new event (events.ts sends them with the batch, used only where an endpoint listens), so
 * a call per id cost more than the rest of the id (issue 21).
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolUsed = POOL_BYTES;
/** The id being made: 16 fresh bytes of the pool, then its fields written over them. */
const bytes = Buffer.alloc(16);

function fill16(): void {
  if (poolUsed + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  pool.copy(bytes, 0, poolUsed, poolUsed + 16);
  poolUsed += 16;
}

/**
 * RFC 9562 UUIDv7. Within one millisecond the 12-bit rand_a field counts up from a random
 * start, so ids made by one process sort in creation order.
 */
export function uuidv7(): string {
  fill16();
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    sequence += 1;
    if (sequence > 0xfff) {
      // Counter exhausted within this millisecond: borrow the next one.
      ms = lastMs + 1;
      sequence = bytes[6]! & 0x7;
    }
  } else {
    sequence = ((bytes[6]! & 0x7) << 8) | bytes[7]!;
  }
  lastMs = ms;
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function newEventId(): string {
  return `evt_${uuidv7()}`;
}

export function newMessageId(): string {
  return `msg_${uuidv7()}`;
}

/**
 * A pixel's publishable key: `tw_pub_` + 24 base62. Not a secret (it sits in the shop's pages),
 * so it is stored as is and carries no checksum: it opens `POST /v1/collect` for one pixel,
 * from that pixel's sites, and nothing else.
 */
export function newPublishableKey(): string {
  return `tw_pub_${randomBase62(24)}`;
}

export const PUBLISHABLE_KEY_PATTERN = /^tw_pub_[0-9A-Za-z]{24}$/;
