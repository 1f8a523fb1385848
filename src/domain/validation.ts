/**
 * Turns a TypeBox schema into a validator that reports the first failure the way the contract
 * orders them (§3): a missing required field, then a field of the wrong type or format, then an
 * unknown field. The same schema types the handler and feeds the OpenAPI document, so what is
 * documented is exactly what is enforced.
 */
import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { TrackwayError } from './errors.ts';
import { isCountryCode, isCurrencyCode } from './events/codes.ts';

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const HOSTNAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether the day exists in the proleptic Gregorian calendar (what Date uses, year 0 a leap
 * year): by arithmetic, as every tracked event's timestamp is checked (issue 21; checked equal
 * to the Date round trip it replaced by fast-check in validation.test.ts).
 */
export function validCalendarDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/** ISO 8601 date-time that names its offset (`Z` or `±hh:mm`): no guessing the caller's zone. */
export function isIsoDateTime(value: string): boolean {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return false;
  const [, y, mo, d, h, mi, s, oh, om] = m;
  if (!validCalendarDate(y!, mo!, d!)) return false;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return false;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

export function isIsoDate(value: string): boolean {
  const m = ISO_DATE.exec(value);
  return m !== null && validCalendarDate(m[1]!, m[2]!, m[3]!);
}

export function isHttpUrl(value: string): boolean {
  // One parse (canParse first would be two); a throw only costs on the rare invalid URL.
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

FormatRegistry.Set('date-time', isIsoDateTime);
FormatRegistry.Set('date-or-date-time', (v) => isIsoDate(v) || isIsoDateTime(v));
FormatRegistry.Set('http-url', isHttpUrl);
FormatRegistry.Set('hostname', (v) => HOSTNAME.test(v));
FormatRegistry.Set('iso4217', isCurrencyCode);
FormatRegistry.Set('iso3166-alpha2', isCountryCode);
// Any character but a control (C0, DEL, C1) or an invisible format character (category Cf:
// right-to-left override U+202E, zero-width space U+200B, BOM …, which let two ids that differ
// look identical): what "printable" means for a caller's event_id (contract §1). Unpaired
// surrogates never get this far (see badStringPath).
FormatRegistry.Set('printable', (v) => !/[\p{Cc}\p{Cf}]/u.test(v));

/** `/user_data/phone` → `user_data.phone` (JSON pointer unescaped). */
function dotted(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

const TYPE_REASONS: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.String]: 'must be a string',
  [ValueErrorType.Number]: 'must be a finite number',
  [ValueErrorType.Integer]: 'must be an integer',
  [ValueErrorType.Boolean]: 'must be a boolean',
  [ValueErrorType.Object]: 'must be an object',
  [ValueErrorType.Array]: 'must be an array',
  [ValueErrorType.Null]: 'must be null',
};

function reason(error: ValueError): string {
  const s = error.schema as Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.StringMinLength:
      return s['minLength'] === 1
        ? 'must not be empty'
        : `must be at least ${s['minLength']} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${s['maxLength']} characters`;
    case ValueErrorType.ObjectMaxProperties:
      return `must have at most ${s['maxProperties']} keys`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s['maxItems']} items`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${s['minItems']} item${s['minItems'] === 1 ? '' : 's'}`;
    case ValueErrorType.ArrayUniqueItems:
      return 'must not repeat items';
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return (s['errorMessage'] as string | undefined) ?? `must be at least ${s['minimum']}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return (s['errorMessage'] as string | undefined) ?? `must be at most ${s['maximum']}`;
  }
  const typeReason = TYPE_REASONS[error.type];
  if (typeReason && error.type !== ValueErrorType.Number && error.type !== ValueErrorType.Integer) {
    return typeReason;
  }
  const custom = s['errorMessage'];
  if (typeof custom === 'string') return custom;
  if (typeReason) return typeReason;
  if (Array.isArray(s['anyOf'])) {
    const options = (s['anyOf'] as Array<Record<string, unknown>>)
      .map((o) => o['const'])
      .filter((c) => c !== undefined);
    if (options.length > 0) return `must be one of: ${options.join(', ')}`;
  }
  if (typeof s['const'] === 'string') return `must be ${s['const']}`;
  return 'is not valid';
}

/** Whether the property at `pointer` is listed in its parent object's `required`. */
function isRequired(schema: TSchema, pointer: string): boolean {
  const parts = pointer.split('/').slice(1);
  let node = schema as Record<string, unknown>;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = (node['properties'] as Record<string, unknown> | undefined)?.[parts[i]!];
    if (!next) return false;
    node = next as Record<string, unknown>;
  }
  const required = node['required'];
  return Array.isArray(required) && required.includes(parts.at(-1));
}

/**
 * Query strings and path parameters arrive as text. Only text that is exactly a number (or
 * `true`/`false`) becomes one; anything else stays text and fails the type check with a clear
 * message. (TypeBox's own Convert would quietly turn `limit=2.5` into 2.)
 */
function coerce(schema: TSchema, input: unknown): unknown {
  const properties = (schema as { properties?: Record<string, { type?: string }> }).properties;
  if (!properties || typeof input !== 'object' || input === null) return input;
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [key, value] of Object.entries(out)) {
    if (typeof value !== 'string') continue;
    const type = properties[key]?.type;
    if (type === 'integer' && /^-?\d{1,15}$/.test(value)) out[key] = Number(value);
    else if (type === 'number' && value.trim() !== '' && Number.isFinite(Number(value)))
      out[key] = Number(value);
    else if (type === 'boolean' && (value === 'true' || value === 'false'))
      out[key] = value === 'true';
  }
  return out;
}

// ES2024's String.prototype.isWellFormed (V8 has it since Node 20); the ES2023 lib lacks it.
declare global {
  interface String {
    isWellFormed(): boolean;
  }
}

const NUL_REASON = 'must not contain NUL (\\u0000) characters';
const SURROGATE_REASON = 'must be valid Unicode (it holds an unpaired surrogate)';

/** Why a string cannot be stored as sent, or null when it can. */
function badText(text: string): string | null {
  if (text.includes('\u0000')) return NUL_REASON;
  // JSON may spell half of a surrogate pair ("\ud800"); it has no UTF-8 form, so SQLite would
  // store invalid bytes and PostgreSQL a replacement character: refused instead of altered.
  if (!text.isWellFormed()) return SURROGATE_REASON;
  return null;
}

/**
 * The first string (or object key, reported at its object) that cannot be stored as sent: it
 * holds NUL, which PostgreSQL text cannot store at all (without this check such a value passed
 * validation and failed the insert with a 500), or an unpaired surrogate. Checked here, once,
 * for every body, query string and path parameter, rather than per field in each schema,
 * because free-form objects such as custom_data have no per-string schema to carry a rule.
 */
function badTextPath(value: unknown): { path: string[]; reason: string } | null {
  // Almost every value is fine: find that out without building paths along the way.
  return hasBadText(value) ? badTextFrom(value, []) : null;
}

function hasBadText(value: unknown): boolean {
  if (typeof value === 'string') return badText(value) !== null;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasBadText(item)) return true;
    return false;
  }
  for (const key in value) {
    if (badText(key) !== null || hasBadText((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function badTextFrom(value: unknown, path: string[]): { path: string[]; reason: string } | null {
  if (typeof value === 'string') {
    const reason = badText(value);
    return reason === null ? null : { path, reason };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = badTextFrom(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      // A key is reported at the object holding it: the key itself is not a usable path.
      const keyReason = badText(key);
      if (keyReason !== null) return { path, reason: keyReason };
      const found = badTextFrom(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

/** JSON Schema counts a string's length in characters; UTF-16 (`.length`) counts 😀 as two. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export type Noun = 'field' | 'parameter';

export interface Validator<T extends TSchema> {
  schema: T;
  /** Returns the value typed by the schema, or throws the first failure as a TrackwayError. */
  (value: unknown): Static<T>;
  /**
   * Like the validator itself, except that unknown fields, when they are all that is wrong,
   * are returned instead of thrown: for a caller with checks of its own (formats the schema
   * cannot express), which by the contract's order (§3) come before unknown fields. The value
   * then carries the unknown fields too; every known one is valid.
   */
  inspect(value: unknown): { value: Static<T>; unknown?: TrackwayError };
}

export function compileValidator<T extends TSchema>(
  schema: T,
  options: {
    noun?: Noun;
    coerce?: boolean;
    /**
     * Refuse text that cannot be stored as sent (NUL, unpaired surrogates) anywhere in the
     * value (default). Off only where the parts are validated again, each with it on: the
     * batch envelope, whose events must fail in their own slot.
     */
    checkText?: boolean;
  } = {},
): Validator<T> {
  const noun = options.noun ?? 'field';
  const check = TypeCompiler.Compile(schema);
  const rootRequired: string[] = Array.isArray(schema['required']) ? schema['required'] : [];
  const fail = (kind: 'Missing required' | 'Invalid' | 'Unknown', path: string, why?: string) => {
    const message =
      kind === 'Missing required'
        ? `Missing required ${noun}: ${path}`
        : kind === 'Invalid'
          ? `Invalid ${noun}: ${path} ${why}`
          : `Unknown ${noun}: ${path}`;
    return new TrackwayError('invalid_request', message, path);
  };

  const inspect = (input: unknown): { value: Static<T>; unknown?: TrackwayError } => {
    const value = options.coerce ? coerce(schema, input) : input;
    const bad = options.checkText === false ? null : badTextPath(value);
    // Unstorable text is a wrong-format failure: after missing fields, before unknown ones (§3).
    // A key at the top level has no field to name: the body (or query string) is at fault.
    const badError =
      bad &&
      fail(
        'Invalid',
        bad.path.length > 0 ? bad.path.join('.') : noun === 'field' ? 'body' : 'query string',
        bad.reason,
      );
    if (check.Check(value)) {
      if (badError) throw badError;
      return { value: value as Static<T> };
    }
    let firstInvalid: TrackwayError | undefined;
    let firstUnknown: TrackwayError | undefined;
    const missing: string[] = [];
    let reported = 0;
    for (const error of check.Errors(value)) {
      reported += 1;
      if (
        error.type === ValueErrorType.StringMaxLength &&
        characterCount(error.value as string) <=
          (error.schema as unknown as { maxLength: number }).maxLength
      ) {
        continue; // long in UTF-16 units only (emoji and other astral characters count two)
      }
      const path = dotted(error.path);
      if (error.path === '' && error.type === ValueErrorType.Object) {
        throw new TrackwayError('invalid_request', 'Request body must be a JSON object');
      }
      if (error.type === ValueErrorType.ObjectRequiredProperty) {
        missing.push(path);
        continue;
      }
      if (error.value === '' && isRequired(schema, error.path)) {
        // An empty string in a required field counts as missing (contract §3).
        missing.push(path);
        continue;
      }
      if (error.type === ValueErrorType.ObjectAdditionalProperties) {
        firstUnknown ??= fail('Unknown', path);
        continue;
      }
      firstInvalid ??= fail('Invalid', path === '' ? noun : path, reason(error));
    }
    if (missing.length > 0) {
      // Reported in the schema's `required` order, so pixel_id always comes before event_name.
      const order = (path: string) => {
        const i = rootRequired.indexOf(path);
        return i === -1 ? rootRequired.length : i;
      };
      throw fail('Missing required', missing.sort((a, b) => order(a) - order(b))[0]!);
    }
    const invalid = firstInvalid ?? badError;
    if (invalid) throw invalid;
    if (reported === 0) throw new TrackwayError('invalid_request', `Invalid ${noun}s`);
    return { value: value as Static<T>, unknown: firstUnknown };
  };
  const validate = (input: unknown): Static<T> => {
    const { value, unknown } = inspect(input);
    if (unknown) throw unknown;
    return value;
  };
  return Object.assign(validate, { schema, inspect });
}

export type { Static };

/**
 * One value's check against its own schema, answering why it fails (the validator's wording,
 * without the path) or null: for a caller that drops a value it cannot use instead of refusing
 * the whole body (contract §19, user_data). Text that cannot be stored as sent fails it too.
 */
export function compileValueCheck(schema: TSchema): (value: unknown) => string | null {
  const check = TypeCompiler.Compile(schema);
  return (value) => {
    if (typeof value === 'string') {
      const bad = badText(value);
      if (bad !== null) return bad;
    }
    if (check.Check(value)) return null;
    for (const error of check.Errors(value)) {
      if (
        error.type === ValueErrorType.StringMaxLength &&
        characterCount(error.value as string) <=
          (error.schema as unknown as { maxLength: number }).maxLength
      ) {
        continue; // long in UTF-16 units only, as above
      }
      return reason(error);
    }
    return null;
  };
}
