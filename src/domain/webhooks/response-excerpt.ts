/**
 * What the attempt log keeps of a receiver's answer. A receiver may send anything: a NUL byte
 * or bytes that are not UTF-8 must neither break the record (PostgreSQL refuses `\u0000` in
 * text) nor be lost silently, so both become U+FFFD, the replacement character, which a reader
 * of the log sees for what it is.
 */

/** The contract's "first 1 KB of the response". */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** NUL, and UTF-16 halves without their pair (text that has no UTF-8 form). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what is replaced
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text any store keeps as it is: no NUL, no lone surrogate. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\uFFFD');
}

/**
 * The first RESPONSE_EXCERPT_BYTES of a response body as storable text: invalid UTF-8 (a
 * character cut at the limit included) decodes to U+FFFD.
 */
export function responseExcerpt(bytes: Uint8Array): string {
  const head = bytes.subarray(0, RESPONSE_EXCERPT_BYTES);
  return storableText(new TextDecoder('utf-8', { fatal: false }).decode(head));
}
