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

function validCalendarDate(y: string, m: string, d: string): boolean {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return (
    date.getUTCFullYear() === Number(y) &&
    date.getUTCMonth() === Number(m) - 1 &&
    date.getUTCDate() === Number(d)
  );
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
FormatRegistry.Set('printable-ascii', (v) => /^[\x20-\x7e]+$/.test(v));

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
      return `must have at least ${s['minItems']} items`;
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

/**
 * The dotted path of the first string (or object key, reported at its object) holding NUL.
 * PostgreSQL text cannot store U+0000 at all: without this check such a value passed
 * validation and failed the insert with a 500. It is checked here, once, for every body,
 * query string and path parameter, rather than per field in each schema, because free-form
 * objects such as custom_data have no per-string schema to carry a rule.
 */
function nulPath(value: unknown): string[] | null {
  // Almost every value holds no NUL: find that out without building paths along the way.
  return hasNul(value) ? nulPathFrom(value, []) : null;
}

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasNul(item)) return true;
    return false;
  }
  for (const key in value) {
    if (key.includes('\u0000') || hasNul((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function nulPathFrom(value: unknown, path: string[]): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPathFrom(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return path;
      const found = nulPathFrom(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

const NUL_REASON = 'must not contain NUL (\\u0000) characters';

export type Noun = 'field' | 'parameter';

export interface Validator<T extends TSchema> {
  schema: T;
  /** Returns the value typed by the schema, or throws the first failure as a TrackwayError. */
  (value: unknown): Static<T>;
}

export function compileValidator<T extends TSchema>(
  schema: T,
  options: {
    noun?: Noun;
    coerce?: boolean;
    /**
     * Refuse NUL anywhere in the value (default). Off only where the parts are validated
     * again, each with it on: the batch envelope, whose events must fail in their own slot.
     */
    checkNul?: boolean;
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

  const validate = (input: unknown): Static<T> => {
    const value = options.coerce ? coerce(schema, input) : input;
    const nul = options.checkNul === false ? null : nulPath(value);
    // A NUL is a wrong-format failure: after missing fields, before unknown ones (§3).
    const nulError = nul && fail('Invalid', nul.length === 0 ? noun : nul.join('.'), NUL_REASON);
    if (check.Check(value)) {
      if (nulError) throw nulError;
      return value as Static<T>;
    }
    let firstInvalid: TrackwayError | undefined;
    let firstUnknown: TrackwayError | undefined;
    const missing: string[] = [];
    for (const error of check.Errors(value)) {
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
    throw (
      firstInvalid ??
      nulError ??
      firstUnknown ??
      new TrackwayError('invalid_request', `Invalid ${noun}s`)
    );
  };
  return Object.assign(validate, { schema });
}

export type { Static };
