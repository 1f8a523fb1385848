import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STANDARD_EVENTS } from '../../../events/standard-events.ts';
import { PLATFORM_MODULES } from '../registry.ts';
import { toSnakeCase } from './names.ts';

const platformEventName = (
  type: keyof typeof PLATFORM_MODULES,
  name: string,
  overrides?: Record<string, string>,
) => PLATFORM_MODULES[type].eventName(name, overrides);

describe('event name mapping', () => {
  it('maps every standard event by the default table (contract §12)', () => {
    const table = STANDARD_EVENTS.map((name) => [
      name,
      platformEventName('meta', name),
      platformEventName('ga4', name),
      platformEventName('tiktok', name),
    ]);
    assert.deepEqual(table, [
      ['PageView', { name: 'PageView' }, { name: 'page_view' }, { name: 'PageView' }],
      ['ViewContent', { name: 'ViewContent' }, { name: 'view_item' }, { name: 'ViewContent' }],
      ['AddToCart', { name: 'AddToCart' }, { name: 'add_to_cart' }, { name: 'AddToCart' }],
      [
        'InitiateCheckout',
        { name: 'InitiateCheckout' },
        { name: 'begin_checkout' },
        { name: 'InitiateCheckout' },
      ],
      [
        'AddPaymentInfo',
        { name: 'AddPaymentInfo' },
        { name: 'add_payment_info' },
        { name: 'AddPaymentInfo' },
      ],
      ['Purchase', { name: 'Purchase' }, { name: 'purchase' }, { name: 'Purchase' }],
      ['Lead', { name: 'Lead' }, { name: 'generate_lead' }, { name: 'Lead' }],
      [
        'CompleteRegistration',
        { name: 'CompleteRegistration' },
        { name: 'sign_up' },
        { name: 'CompleteRegistration' },
      ],
      ['Search', { name: 'Search' }, { name: 'search' }, { name: 'Search' }],
      ['Subscribe', { name: 'Subscribe' }, { name: 'subscribe' }, { name: 'Subscribe' }],
    ]);
  });

  it('turns custom names into GA4 snake_case', () => {
    assert.equal(toSnakeCase('NewsletterSignup'), 'newsletter_signup');
    assert.equal(toSnakeCase('Newsletter Signup-2'), 'newsletter_signup_2');
    assert.equal(toSnakeCase('HTMLExport'), 'html_export');
    assert.equal(toSnakeCase('  café ouvert '), 'café_ouvert');
    assert.deepEqual(platformEventName('ga4', 'Video Watched'), { name: 'video_watched' });
  });

  it('skips names GA4 would silently drop, saying why', () => {
    assert.deepEqual(platformEventName('ga4', '2FA Enabled'), {
      skipped:
        'GA4 event name "2_fa_enabled" must start with a letter and hold only letters, digits and _',
    });
    assert.deepEqual(platformEventName('ga4', 'SessionStart'), {
      skipped: 'GA4 event name "session_start" is reserved by the Measurement Protocol',
    });
    assert.deepEqual(platformEventName('ga4', 'x', { x: 'google_thing' }), {
      skipped: 'GA4 event name "google_thing" starts with the reserved prefix "google_"',
    });
    assert.deepEqual(platformEventName('ga4', 'A'.repeat(41)), {
      skipped: `GA4 event name "${'a'.repeat(41)}" is longer than 40 characters`,
    });
  });

  it('lets a destination override any name', () => {
    const overrides = { Purchase: 'PlaceAnOrder', Lead: 'qualified_lead' };
    assert.deepEqual(platformEventName('tiktok', 'Purchase', overrides), { name: 'PlaceAnOrder' });
    assert.deepEqual(platformEventName('ga4', 'Lead', overrides), { name: 'qualified_lead' });
    assert.deepEqual(platformEventName('meta', 'Lead', overrides), { name: 'qualified_lead' });
  });
});
