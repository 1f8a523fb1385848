/**
 * Our event names → GA4's, overridable per destination with `config.event_names`. Source: GA4
 * recommended events (developers.google.com/analytics/devguides/collection/ga4/reference/events).
 */
import type { PlatformEventName } from '../platform.ts';

export const GA4_NAMES: Readonly<Record<string, string>> = {
  PageView: 'page_view',
  ViewContent: 'view_item',
  AddToCart: 'add_to_cart',
  InitiateCheckout: 'begin_checkout',
  AddPaymentInfo: 'add_payment_info',
  Purchase: 'purchase',
  Lead: 'generate_lead',
  CompleteRegistration: 'sign_up',
  Search: 'search',
};

/**
 * Names the Measurement Protocol reserves (protocol/ga4/reference#reserved_names, the list as
 * of 2026-11-26); events sent under them are dropped. `page_view` is not among them (it is only reserved for events
 * created in the GA4 interface), which is why PageView may map to it.
 */
const GA4_RESERVED_NAMES = new Set([
  'ad_activeview',
  'ad_click',
  'ad_exposure',
  'ad_query',
  'ad_reward',
  'adunit_exposure',
  'app_clear_data',
  'app_exception',
  'app_install',
  'app_remove',
  'app_store_refund',
  'app_update',
  'app_upgrade',
  'dynamic_link_app_open',
  'dynamic_link_app_update',
  'dynamic_link_first_open',
  'error',
  'firebase_campaign',
  'firebase_in_app_message_action',
  'firebase_in_app_message_dismiss',
  'firebase_in_app_message_impression',
  'first_open',
  'first_visit',
  'notification_dismiss',
  'notification_foreground',
  'notification_open',
  'notification_receive',
  'notification_send',
  'os_update',
  'session_start',
  'user_engagement',
  // Only allowed for app streams; a destination here is a web stream.
  'ad_impression',
  'in_app_purchase',
  'screen_view',
]);
export const GA4_RESERVED_PREFIXES = ['_', 'firebase_', 'ga_', 'google_', 'gtag.'];
export const GA4_MAX_NAME_LENGTH = 40;
/** Letter first, then letters, digits and underscores (GA4's event and parameter name rule). */
const GA4_NAME = /^\p{L}[\p{L}\p{N}_]*$/u;

/** Why GA4 would drop an event or parameter under this name, or null when it is valid. */
export function ga4NameProblem(name: string): string | null {
  if (name.length > GA4_MAX_NAME_LENGTH) return `is longer than ${GA4_MAX_NAME_LENGTH} characters`;
  const prefix = GA4_RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (prefix) return `starts with the reserved prefix "${prefix}"`;
  if (!GA4_NAME.test(name)) return 'must start with a letter and hold only letters, digits and _';
  return null;
}

/** `AddToCart` → `add_to_cart`, `Newsletter Signup-2` → `newsletter_signup_2`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1_$2')
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
}

/**
 * The name an event goes out under, or why it cannot go out (an impossible GA4 name is
 * `skipped`, not sent: GA4 would accept it with a 2xx and silently drop it).
 */
export function ga4EventName(
  eventName: string,
  overrides?: Record<string, string>,
): PlatformEventName {
  const name = overrides?.[eventName] ?? GA4_NAMES[eventName] ?? toSnakeCase(eventName);
  if (GA4_RESERVED_NAMES.has(name)) {
    return { skipped: `GA4 event name "${name}" is reserved by the Measurement Protocol` };
  }
  const problem = ga4NameProblem(name);
  return problem ? { skipped: `GA4 event name "${name}" ${problem}` } : { name };
}
