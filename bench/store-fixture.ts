/** An account on the top plan and one active pixel, made through a store directly (no HTTP). */
import { createAccount } from '../src/domain/accounts/accounts.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import type { Store } from '../src/domain/ports/store.ts';
import { pixelRecord } from '../test/harness.ts';

export async function accountWithPixel(
  store: Store,
): Promise<{ accountId: string; apiKey: string; pixelId: string }> {
  const { account, apiKey } = await createAccount(
    { store, clock: systemClock },
    { name: 'Bench', plan: 'ultra' },
  );
  // The storage suites' pixel record: 'Shop' on shop.example.com, active.
  return { accountId: account.id, apiKey, pixelId: await addPixel(store, account.id) };
}

/** One active pixel of `accountId`, made through the store; its id. */
export async function addPixel(
  store: Store,
  accountId: string,
  site?: { name: string; domain: string },
): Promise<string> {
  const pixel = pixelRecord(
    accountId,
    new Date(),
    site && { ...site, trackingDomain: site.domain },
  );
  await store.pixels.createPixel(pixel, null, []);
  return pixel.id;
}
