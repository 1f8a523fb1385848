/**
 * Key-shaped values (API keys, webhook secrets) masked out of any text about to be logged or
 * shown: a URL with `?api_key=…`, an error message quoting a header, a configuration value.
 * The code never logs them on purpose; this catches what a caller put where it did not belong.
 */
const KEY_SHAPED = /(tw_live_|whsec_)[0-9A-Za-z+/=%_-]+/g;

export function redactSecrets(text: string): string {
  return text.includes('tw_live_') || text.includes('whsec_')
    ? text.replace(KEY_SHAPED, '$1[redacted]')
    : text;
}
