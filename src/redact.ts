/**
 * What must never be printed, masked out of any text about to be logged or shown to an
 * operator: key-shaped values (API keys, webhook secrets: a URL with `?api_key=…`, an error
 * message quoting a header) and the credentials in a URL (a database or Redis URL in a
 * configuration error). The code never logs them on purpose; this catches what a caller or an
 * operator put where it did not belong.
 */
const KEY_SHAPED = /(tw_live_|whsec_)[0-9A-Za-z+/=%_-]+/g;

export function redactSecrets(text: string): string {
  return text.includes('tw_live_') || text.includes('whsec_')
    ? text.replace(KEY_SHAPED, '$1[redacted]')
    : text;
}

/**
 * `text` with key-shaped values redacted and URL credentials masked: the password (or the whole
 * user part when it has no `:`, as in `redis://password@host`) and `password=` parameters.
 */
export function maskCredentials(text: string): string {
  const masked = text.includes('://')
    ? text
        .replace(/(\/\/[^/@:?#\s"]*:)[^/@?#\s"]*@/g, '$1***@')
        .replace(/\/\/[^/@:?#\s"*]+@/g, '//***@')
    : text;
  return redactSecrets(masked.replace(/((?:password|pass|pwd)=)[^&#\s"]*/gi, '$1***'));
}
