/**
 * Is an E.164 number possible? The answer is libphonenumber-js's, to the letter:
 * `parsePhoneNumberFromString(number)?.isPossible() === true`. Asking the library costs about
 * 6 µs a number (it parses in full: extensions, national prefixes, the country behind a shared
 * calling code, a regular expression built per step), which was a tenth of a tracked event's
 * time on the event loop. Most numbers need none of that, because for them the answer is
 * settled by the library's own metadata:
 *
 * For `+` followed by digits, the library takes the first 1-3 digits that form a known calling
 * code. Under that calling code's main country it strips a national prefix only if the
 * country's "national prefix for parsing" pattern matches the start of the rest; if it does
 * not, the rest is the national number as given. Then `isPossible()` is whether its length is
 * one of the possible lengths of the country the number is placed in, which is one of the
 * countries sharing the calling code. So when the prefix pattern does not match and the length
 * is possible in all of those countries, the answer is yes; when it is possible in none, no.
 * Everything else (a prefix that would be stripped, a length only some countries allow,
 * non-geographic codes, national numbers under 2 digits) goes to the library itself.
 * phone.test.ts checks the two agree on every calling code and every length.
 */
import { Metadata, parsePhoneNumberFromString } from 'libphonenumber-js';

interface CallingCodePlan {
  /** The main country's national-prefix-for-parsing pattern, anchored; null when it has none. */
  nationalPrefix: RegExp | null;
  /** National number lengths possible in every country of the calling code. */
  everywhere: Set<number>;
  /** National number lengths possible in at least one of them. */
  somewhere: Set<number>;
}

/** The library's shortest national number (MIN_LENGTH_FOR_NSN): shorter ones it refuses. */
const MIN_NATIONAL_LENGTH = 2;

// `new Metadata()` is the same metadata parsePhoneNumberFromString uses (the package's default
// build). Its declared type leaves out the calls used here.
interface NumberingPlan {
  possibleLengths(): number[] | undefined;
  nationalPrefixForParsing(): string | undefined;
}
interface MetadataApi {
  countryCallingCodes(): Record<string, string[]>;
  selectNumberingPlan(countryOrCallingCode: string): void;
  numberingPlan: NumberingPlan;
}

function planOf(countryOrCallingCode: string): NumberingPlan {
  const metadata = new Metadata() as unknown as MetadataApi;
  metadata.selectNumberingPlan(countryOrCallingCode);
  return metadata.numberingPlan;
}

/** Calling code → what decides it quickly; null for the codes always left to the library. */
function buildPlans(): Map<string, CallingCodePlan | null> {
  const plans = new Map<string, CallingCodePlan | null>();
  const metadata = new Metadata() as unknown as MetadataApi;
  for (const [callingCode, countries] of Object.entries(metadata.countryCallingCodes())) {
    const lengths = countries.map((country) =>
      country === '001' ? undefined : planOf(country).possibleLengths(),
    );
    if (lengths.some((l) => l === undefined)) {
      plans.set(callingCode, null);
      continue;
    }
    const sets = lengths.map((l) => new Set(l));
    const somewhere = new Set(sets.flatMap((s) => [...s]));
    const everywhere = new Set([...somewhere].filter((n) => sets.every((s) => s.has(n))));
    const pattern = planOf(callingCode).nationalPrefixForParsing();
    const nationalPrefix = pattern ? new RegExp(`^(?:${pattern})`) : null;
    // A pattern that matches nothing at all still "matches" at the start: always the library.
    plans.set(
      callingCode,
      nationalPrefix?.test('') ? null : { nationalPrefix, everywhere, somewhere },
    );
  }
  return plans;
}

const PLANS = buildPlans();

/**
 * The quick answer for `+<digits>`, or undefined when only the library can tell.
 * Exported for phone.test.ts, which checks how often it answers.
 */
export function quickPossible(e164: string): boolean | undefined {
  // Calling codes are 1-3 digits and none is a prefix of another: the first found is the one.
  for (let end = 2; end <= 4 && end <= e164.length; end++) {
    const code = e164.slice(1, end);
    if (!PLANS.has(code)) continue;
    const plan = PLANS.get(code);
    const national = e164.slice(end);
    if (!plan || national.length < MIN_NATIONAL_LENGTH) return undefined;
    if (plan.nationalPrefix?.test(national)) return undefined;
    if (plan.everywhere.has(national.length)) return true;
    if (!plan.somewhere.has(national.length)) return false;
    return undefined;
  }
  return undefined;
}

/** `e164` is `+` and 2-15 digits, the first not 0 (checked by the caller). */
export function isPossibleE164(e164: string): boolean {
  return quickPossible(e164) ?? parsePhoneNumberFromString(e164)?.isPossible() === true;
}
