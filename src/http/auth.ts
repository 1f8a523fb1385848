import { authenticate } from '../domain/accounts/accounts.ts';
import type { Account } from '../domain/model.ts';
import type { AccountStore } from '../domain/ports.ts';

const BEARER = /^Bearer +(\S+) *$/i;

/** `Authorization: Bearer <key>` → the key's account; anything else is a 401 (spec §Authentication). */
export function authenticateRequest(
  keys: Pick<AccountStore, 'findByKeyHash'>,
  header: string | undefined,
): Promise<Account> {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  return authenticate(keys, token);
}
