/** The spec's standard event names, and the near misses worth a warning. */
export const STANDARD_EVENTS = [
  'PageView',
  'ViewContent',
  'AddToCart',
  'InitiateCheckout',
  'AddPaymentInfo',
  'Purchase',
  'Lead',
  'CompleteRegistration',
  'Search',
  'Subscribe',
] as const;

const fold = (name: string) => name.toLowerCase().replace(/[\s_.-]+/g, '');
const byFolded = new Map(STANDARD_EVENTS.map((name) => [fold(name), name]));
const exact = new Set<string>(STANDARD_EVENTS);

/**
 * A custom name that differs from a standard one only by case or separators (`purchase`,
 * `add_to_cart`) is almost always a mistake that would split the caller's reports; it is
 * accepted as sent, with a warning naming the standard spelling.
 */
export function eventNameWarning(name: string): string | undefined {
  if (exact.has(name)) return undefined;
  const standard = byFolded.get(fold(name));
  if (standard === undefined) return undefined;
  return `event_name "${name}" is not a standard event; did you mean "${standard}"?`;
}
