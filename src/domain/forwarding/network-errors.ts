/**
 * A platform request's network failure in words (issue 34: the record showed raw `ENOTFOUND`).
 * Node's and undici's error codes, as they appear in a job's `last_error`, each with what it
 * means for the person reading the dashboard; the raw text stays beside it.
 */
const CODES: ReadonlyArray<[RegExp, string]> = [
  [/\bENOTFOUND\b/, "The platform's address could not be found (the DNS lookup failed)."],
  [/\bEAI_AGAIN\b/, "The platform's address could not be looked up for now (DNS unavailable)."],
  [/\bECONNREFUSED\b/, "The platform's server refused the connection."],
  [/\bECONNRESET\b|\bUND_ERR_SOCKET\b/, 'The connection to the platform was cut.'],
  [
    /\bETIMEDOUT\b|\bUND_ERR_CONNECT_TIMEOUT\b|\bUND_ERR_HEADERS_TIMEOUT\b|\bUND_ERR_BODY_TIMEOUT\b|\btimed? ?out\b/i,
    'The platform did not answer in time.',
  ],
  [/\bEHOSTUNREACH\b|\bENETUNREACH\b/, "The platform's network could not be reached."],
  [
    /\bCERT_|\bUNABLE_TO_VERIFY_LEAF_SIGNATURE\b|\bSELF_SIGNED_CERT|\bERR_TLS_/,
    "The platform's TLS certificate could not be verified.",
  ],
];

/** Plain words for a network failure in `text`, or null when it is not one. */
export function networkErrorText(text: string | null): string | null {
  if (text === null) return null;
  for (const [pattern, words] of CODES) if (pattern.test(text)) return words;
  return null;
}
