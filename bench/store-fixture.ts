/** An account on the top plan and one active pixel, made through a store directly (no HTTP). */
import { randomBytes } from 'node:crypto';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import { newPublishableKey } from '../src/domain/ids.ts';
import { systemClock } from '../src/domain/ports/clock.ts';
import type { Store } from '../src/domain/ports/store.ts';

export async function accountWithPixel(
  store: Store,
): Promise<{ accountId: string; apiKey: string; pixelId: string }> {
  const { account, apiKey } = await createAccount(
    { store, clock: systemClock },
    { name: 'Bench', plan: 'ultra' },
  );
  const now = new Date();
  const pixelId = `px_${randomBytes(8).toString('hex')}`;
  await store.pixels.createPixel(
    {
      id: pixelId,
      accountId: account.id,
      name: 'Shop',
      domain: 'shop.example.com',
      trackingDomain: 'shop.example.com',
      publishableKey: newPublishableKey(),
      previousPublishableKey: null,
      previousKeyExpiresAt: null,
      status: 'active',
      createdAt: now,
      updatedAt: now,
    },
    null,
    [],
  );
  return { accountId: account.id, apiKey, pixelId };
}
