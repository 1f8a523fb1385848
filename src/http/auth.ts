import { authenticate } from '../domain/accounts/accounts.ts';
import type { Account } from '../domain/model.ts';
import type { Store } from '../domain/ports.ts';

const BEARER = /^Bearer +(\S+) *$/i;

/** `Authorization: Bearer <key>` → the key's account; anything else is a 401 (spec §Authentication). */
export function authenticateRequest(store: Store, header: string | undefined): Promise<Account> {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  return authenticate(store, token);
}
