import { authenticateKey } from '../domain/accounts/accounts.ts';
import type { Account, KeyScope } from '../domain/model.ts';
import type { AccountStore } from '../domain/ports.ts';

const BEARER = /^Bearer +(\S+) *$/i;

/** `Authorization: Bearer <key>` → the key's account, id and scope; anything else is a 401 (spec §Authentication). */
export function authenticateRequest(
  keys: Pick<AccountStore, 'findByKeyHash'>,
  header: string | undefined,
): Promise<{ account: Account; keyId: string; scope: KeyScope }> {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  return authenticateKey(keys, token);
}
