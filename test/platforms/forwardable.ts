/** A stored event ready to forward, built the way ingestion builds it (for builder tests). */
import type { UserData } from '../../src/domain/events/user-data.ts';
import type { ActionSource, RawMatchKeys } from '../../src/domain/forwarding/match-keys.ts';
import type { ForwardableEvent } from '../../src/domain/forwarding/model.ts';
import { platformUserData } from '../../src/domain/forwarding/platform-user-data.ts';
import type { TrackedEvent } from '../../src/domain/model.ts';

export const UA =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

let sequence = 0;

export function forwardable(
  options: {
    event?: Partial<TrackedEvent>;
    userData?: UserData;
    matchKeys?: RawMatchKeys | null;
    actionSource?: ActionSource;
  } = {},
): ForwardableEvent {
  sequence += 1;
  const { hashes, location } = platformUserData(options.userData ?? { email: 'jane@example.com' });
  const timestamp = options.event?.timestamp ?? new Date();
  return {
    event: {
      accountId: 'acc_test',
      pixelId: 'px_test',
      eventId: `evt_${sequence}`,
      eventName: 'Purchase',
      value: 49.9,
      currency: 'EUR',
      timestamp,
      receivedAt: timestamp,
      url: 'https://shop.example/checkout/done',
      referrer: 'https://shop.example/cart',
      title: 'Thank you',
      searchString: null,
      userData: null,
      customData: { order_ref: 'A-1001' },
      ...options.event,
    },
    actionSource: options.actionSource ?? 'website',
    hashes,
    matchKeys:
      options.matchKeys === undefined
        ? {
            clientIpAddress: '203.0.113.7',
            clientUserAgent: UA,
            fbp: 'fb.1.1558571054389.1098115397',
          }
        : options.matchKeys,
    location: options.matchKeys === null ? null : location,
  };
}
