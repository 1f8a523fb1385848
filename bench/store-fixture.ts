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
  const now = new Date();
  // The storage suites' pixel record: 'Shop' on shop.example.com, active.
  const pixel = pixelRecord(account.id, now);
  await store.pixels.createPixel(pixel, null, []);
  const pixelId = pixel.id;
  return { accountId: account.id, apiKey, pixelId };
}
