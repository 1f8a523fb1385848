/**
 * Operator verbs (the CLI's) and authentication. API keys exist in clear only in the value these
 * functions return once; storage sees their SHA-256.
 */
import { TrackwayError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Account, ApiKeyRecord, KeyScope, ManagedKey } from '../model.ts';
import type { AccountStore, NewApiKeyRow } from '../ports/account-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { Store } from '../ports/store.ts';
import { generateApiKey, hashApiKey, hasValidChecksum } from './api-key.ts';
import { PLANS, type PlanName, type SubscriptionStatus } from './plans.ts';

export interface Operator {
  store: Store;
  clock: Clock;
}

export class OperatorError extends Error {
  override name = 'OperatorError';
}

function newKeyRow(accountId: string, now: Date): { row: NewApiKeyRow; apiKey: string } {
  const key = generateApiKey();
  return {
    apiKey: key.apiKey,
    row: {
      id: newId('key'),
      accountId,
      hash: key.hash,
      prefix: key.prefix,
      last4: key.last4,
      createdAt: now,
      revokedAt: null,
    },
  };
}

export async function createAccount(
  op: Operator,
  input: { name: string; plan: PlanName },
): Promise<{ account: Account; apiKey: string; keyId: string }> {
  if (input.name.trim() === '') throw new OperatorError('--name must not be empty');
  const now = op.clock.now();
  const account: Account = {
    id: newId('acct'),
    name: input.name.trim(),
    plan: input.plan,
    status: 'active',
    customRequestsPerMinute: null,
    customDailyLimit: null,
    createdAt: now,
  };
  const { row, apiKey } = newKeyRow(account.id, now);
  await op.store.accounts.createAccount(account, row);
  return { account, apiKey, keyId: row.id };
}

async function existingAccount(op: Operator, accountId: string): Promise<Account> {
  const account = await op.store.accounts.getAccount(accountId);
  if (!account) throw new OperatorError(`No such account: ${accountId}`);
  return account;
}

/**
 * Another key for the account, named and scoped as the keys API makes them (`POST /v1/keys`);
 * unnamed and `full` when the operator gives neither, as CLI keys always were.
 */
export async function createKey(
  op: Operator,
  accountId: string,
  options: { name?: string; scope?: KeyScope } = {},
) {
  await existingAccount(op, accountId);
  const { row, apiKey } = newKeyRow(accountId, op.clock.now());
  const name = options.name?.trim() ?? '';
  const scope = options.scope ?? 'full';
  await op.store.keys.createKey({ ...row, name, scope });
  return { keyId: row.id, apiKey, accountId, name, scope };
}

export async function listKeys(op: Operator, accountId: string): Promise<ManagedKey[]> {
  await existingAccount(op, accountId);
  return op.store.keys.listKeys(accountId);
}

export function listAccounts(op: Operator): Promise<Account[]> {
  return op.store.accounts.listAccounts();
}

/** An account with its keys (display prefixes only), for `accounts show`. */
export async function showAccount(
  op: Operator,
  accountId: string,
): Promise<{ account: Account; keys: ManagedKey[] }> {
  const account = await existingAccount(op, accountId);
  return { account, keys: await op.store.keys.listKeys(accountId) };
}

/**
 * `keys revoke`: an operator who revokes a key that was revoked already has the wrong key in
 * hand, so it is an error naming when, not a quiet success (the API's DELETE stays idempotent).
 */
export async function revokeKey(op: Operator, keyId: string): Promise<ApiKeyRecord> {
  const now = op.clock.now();
  const key = await op.store.accounts.revokeApiKey(keyId, now);
  if (!key) throw new OperatorError(`No such key: ${keyId}`);
  // The store keeps the first revocation's time: any other means this call changed nothing.
  if (key.revokedAt !== null && key.revokedAt.getTime() !== now.getTime()) {
    throw new OperatorError(
      `Key ${keyId} was already revoked at ${key.revokedAt.toISOString()}; nothing changed`,
    );
  }
  return key;
}

/** The limits that bind an account: the plan's, or an enterprise account's custom ones. */
export function effectiveLimits(account: Account) {
  const plan = PLANS[account.plan];
  return {
    requestsPerMinute: account.customRequestsPerMinute ?? plan.requestsPerMinute,
    dailyLimit: account.customDailyLimit ?? plan.dailyLimit,
  };
}

export interface PlanChange {
  plan?: PlanName;
  status?: SubscriptionStatus;
  requestsPerMinute?: number;
  dailyLimit?: number;
}

/**
 * Changes plan, status or custom limits and emits `subscription.updated` in the same
 * transaction. Custom limits belong to enterprise accounts only; moving off enterprise drops
 * them, since another plan's limits are the plan's.
 */
export async function setPlan(op: Operator, accountId: string, change: PlanChange) {
  const now = op.clock.now();
  const result = await op.store.accounts.updateAccount(accountId, (current) => {
    const plan = change.plan ?? current.plan;
    const custom = change.requestsPerMinute !== undefined || change.dailyLimit !== undefined;
    if (custom && plan !== 'enterprise') {
      throw new OperatorError(
        `Custom limits are only for enterprise accounts; ${accountId} is on ${plan}`,
      );
    }
    const next: Account = {
      ...current,
      plan,
      status: change.status ?? current.status,
      customRequestsPerMinute:
        plan === 'enterprise'
          ? (change.requestsPerMinute ?? current.customRequestsPerMinute)
          : null,
      customDailyLimit:
        plan === 'enterprise' ? (change.dailyLimit ?? current.customDailyLimit) : null,
    };
    const unchanged =
      next.plan === current.plan &&
      next.status === current.status &&
      next.customRequestsPerMinute === current.customRequestsPerMinute &&
      next.customDailyLimit === current.customDailyLimit;
    if (unchanged) return null;
    const limits = effectiveLimits(next);
    return {
      next,
      emit: [
        {
          accountId,
          type: 'subscription.updated',
          occurredAt: now,
          data: {
            account_id: accountId,
            plan: next.plan,
            status: next.status,
            previous_plan: current.plan,
            limits: {
              requests_per_minute: limits.requestsPerMinute,
              daily_limit: limits.dailyLimit,
              pixels: PLANS[next.plan].pixelQuota,
            },
          },
        },
      ],
    };
  });
  if (!result) throw new OperatorError(`No such account: ${accountId}`);
  return result;
}

export const INVALID_API_KEY = 'Invalid API key';
/** No key at all is a different mistake from a wrong one (a forgotten header, a proxy dropping it). */
export const MISSING_API_KEY = 'Missing API key: send the header Authorization: Bearer <API_KEY>';

/**
 * Resolves a presented key to its account. The checksum is checked before any storage lookup,
 * so a mistyped or guessed key costs nothing. 401 for anything that is not a live key; 403 when
 * the key is good but the subscription does not allow API access. `keys` is the account store or
 * an ApiKeyCache in front of it; the access check runs on every request either way.
 */
export async function authenticate(
  keys: Pick<AccountStore, 'findByKeyHash'>,
  presented: string | undefined,
): Promise<Account> {
  return (await authenticateKey(keys, presented)).account;
}

/** As authenticate, with the key's id and scope (what the HTTP layer checks routes against). */
export async function authenticateKey(
  keys: Pick<AccountStore, 'findByKeyHash'>,
  presented: string | undefined,
): Promise<{ account: Account; keyId: string; scope: KeyScope }> {
  if (presented === undefined || !hasValidChecksum(presented)) {
    throw new TrackwayError('unauthorized', INVALID_API_KEY);
  }
  return authenticateKeyHash(keys, hashApiKey(presented));
}

/** As authenticateKey, for a key whose checksum was checked and whose hash is known already. */
export async function authenticateKeyHash(
  keys: Pick<AccountStore, 'findByKeyHash'>,
  hash: string,
): Promise<{ account: Account; keyId: string; scope: KeyScope }> {
  const found = await keys.findByKeyHash(hash);
  if (!found) throw new TrackwayError('unauthorized', INVALID_API_KEY);
  assertApiAccess(found.account);
  return found;
}

export function assertApiAccess(account: Account): void {
  if (!PLANS[account.plan].apiAccess) {
    throw new TrackwayError(
      'forbidden',
      `Subscription limit exceeded: plan ${account.plan} has no API access`,
    );
  }
  if (account.status !== 'active') {
    throw new TrackwayError(
      'forbidden',
      `Subscription limit exceeded: subscription is ${account.status}`,
    );
  }
}
