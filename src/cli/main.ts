/**
 * `trackway <command>`: the operator's interface (contract §9). Every command takes `--json`
 * and then prints exactly one JSON object; errors go to stderr with a non-zero exit.
 */
import { parseArgs } from 'node:util';
import { loadConfig, wantsStackTraces } from '../config.ts';
import {
  createAccount,
  createKey,
  effectiveLimits,
  listKeys,
  OperatorError,
  type PlanChange,
  revokeKey,
  setPlan,
} from '../domain/accounts/accounts.ts';
import {
  isPlanName,
  isSubscriptionStatus,
  PLAN_NAMES,
  SUBSCRIPTION_STATUSES,
} from '../domain/accounts/plans.ts';
import { systemClock } from '../domain/ports.ts';
import { maskCredentials } from '../redact.ts';
import { openStore } from '../storage/index.ts';

class UsageError extends Error {}

const USAGE = `Usage: trackway <command> [options] [--json]

Commands:
  serve                                   start the HTTP API (and the webhook delivery worker)
  worker                                  run the webhook delivery worker alone
  migrate                                 apply pending database migrations
  accounts create --name N --plan P       create an account and print its first API key
  keys create --account A                 create another API key for an account
  keys list --account A                   list an account's keys (revoked ones included)
  keys revoke --key-id K                  revoke a key
  plans set --account A [--plan P] [--status S] [--requests-per-minute N] [--daily-limit N]
                                          change plan, subscription status or (enterprise) custom limits
  openapi                                 print the OpenAPI 3.1 document

Plans: ${PLAN_NAMES.join(', ')}. Statuses: ${SUBSCRIPTION_STATUSES.join(', ')}.
Configuration comes from the environment (DATABASE_URL, PORT, HOST, …; see README).`;

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  plan: { type: 'string' },
  status: { type: 'string' },
  account: { type: 'string' },
  'key-id': { type: 'string' },
  'requests-per-minute': { type: 'string' },
  'daily-limit': { type: 'string' },
} as const;

type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

function required(values: Values, name: keyof Values): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/**
 * Decimal digits only (Number() would also take `0x10` and `1e3`), and no larger than a
 * double holds exactly: both stores keep limits as 64-bit integers.
 */
function positiveInteger(values: Values, name: 'requests-per-minute' | 'daily-limit') {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `--${name} must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, in decimal digits`,
    );
  }
  return n;
}

interface Output {
  json: Record<string, unknown>;
  text: string;
}

async function withStore<T>(
  run: (op: {
    store: Awaited<ReturnType<typeof openStore>>;
    clock: typeof systemClock;
  }) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.database, { poolSize: config.databasePoolSize });
  try {
    await store.migrate();
    return await run({ store, clock: systemClock });
  } finally {
    await store.close();
  }
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

async function runCommand(command: string, values: Values): Promise<Output> {
  switch (command) {
    case 'migrate':
      return withStore(async () => ({
        json: { migrated: true },
        text: 'Migrations applied.',
      }));
    case 'accounts create': {
      const name = required(values, 'name');
      const plan = required(values, 'plan');
      if (!isPlanName(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
      const { account, apiKey } = await withStore((op) => createAccount(op, { name, plan }));
      return {
        json: { account_id: account.id, api_key: apiKey },
        text: `Created account ${account.id} (${account.name}, plan ${plan}).\nAPI key (shown only once): ${apiKey}`,
      };
    }
    case 'keys create': {
      const accountId = required(values, 'account');
      const key = await withStore((op) => createKey(op, accountId));
      return {
        json: { key_id: key.keyId, api_key: key.apiKey, account_id: key.accountId },
        text: `Created key ${key.keyId} for ${key.accountId}.\nAPI key (shown only once): ${key.apiKey}`,
      };
    }
    case 'keys list': {
      const accountId = required(values, 'account');
      const keys = await withStore((op) => listKeys(op, accountId));
      const rows = keys.map((k) => ({
        key_id: k.id,
        prefix: k.prefix,
        last4: k.last4,
        created_at: iso(k.createdAt),
        revoked_at: iso(k.revokedAt),
      }));
      return {
        json: { keys: rows },
        text:
          rows
            .map(
              (k) =>
                `${k.key_id}  ${k.prefix}…${k.last4}  created ${k.created_at}${k.revoked_at ? `  revoked ${k.revoked_at}` : ''}`,
            )
            .join('\n') || 'No keys.',
      };
    }
    case 'keys revoke': {
      const keyId = required(values, 'key-id');
      const key = await withStore((op) => revokeKey(op, keyId));
      return {
        json: { key_id: key.id, account_id: key.accountId, revoked_at: iso(key.revokedAt) },
        text: `Revoked key ${key.id}.`,
      };
    }
    case 'plans set': {
      const accountId = required(values, 'account');
      const change: PlanChange = {};
      if (values.plan !== undefined) {
        if (!isPlanName(values.plan))
          throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
        change.plan = values.plan;
      }
      if (values.status !== undefined) {
        if (!isSubscriptionStatus(values.status)) {
          throw new UsageError(`--status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`);
        }
        change.status = values.status;
      }
      const rpm = positiveInteger(values, 'requests-per-minute');
      const daily = positiveInteger(values, 'daily-limit');
      if (rpm !== undefined) change.requestsPerMinute = rpm;
      if (daily !== undefined) change.dailyLimit = daily;
      if (Object.keys(change).length === 0) {
        throw new UsageError(
          'plans set needs at least one of --plan, --status, --requests-per-minute, --daily-limit',
        );
      }
      const { after } = await withStore((op) => setPlan(op, accountId, change));
      const limits = effectiveLimits(after);
      return {
        json: {
          account_id: after.id,
          plan: after.plan,
          status: after.status,
          limits: { requests_per_minute: limits.requestsPerMinute, daily_limit: limits.dailyLimit },
        },
        text: `Account ${after.id}: plan ${after.plan}, status ${after.status}, ${limits.requestsPerMinute}/min, ${limits.dailyLimit}/day.`,
      };
    }
    case 'openapi': {
      const { renderOpenApi } = await import('../http/openapi.ts');
      const document = await renderOpenApi();
      return { json: document, text: JSON.stringify(document, null, 2) };
    }
    default:
      throw new UsageError(`Unknown command: ${command || '(none)'}`);
  }
}

/** Runs until SIGTERM/SIGINT, then drains and exits 0. */
function exitOnSignal(server: { close(): Promise<void> }): void {
  const stop = (signal: string) => {
    process.stderr.write(`${signal} received: draining\n`);
    server.close().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

async function serve(): Promise<void> {
  const { startServer } = await import('../main.ts');
  exitOnSignal(await startServer());
}

async function runWorker(): Promise<void> {
  const { startWorker, stdoutLines } = await import('../main.ts');
  const { createLogger } = await import('../logger.ts');
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const store = await openStore(config.database, { poolSize: config.databasePoolSize });
  let worker: ReturnType<typeof startWorker>;
  try {
    await store.migrate();
    worker = startWorker(config, store, logger);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  logger.info('trackway delivery worker running');
  stdoutLines()('Trackway delivery worker running');
  exitOnSignal({
    async close() {
      await worker.stop();
      await store.close();
    },
  });
}

export async function main(argv: string[]): Promise<number> {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const [first, second] = positionals;
  const command = ['accounts', 'keys', 'plans'].includes(first!)
    ? `${first} ${second ?? ''}`.trim()
    : first!;
  try {
    if (command === 'serve' || command === 'worker') {
      await (command === 'serve' ? serve() : runWorker());
      return -1; // keeps running
    }
    const output = await runCommand(command, values);
    process.stdout.write(values.json ? `${JSON.stringify(output.json)}\n` : `${output.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    // One line an operator can act on (credentials and keys masked); the stack only when
    // they asked for debug logs. Operator mistakes (bad config, database unreachable) are
    // printed as they are; anything else is prefixed so it reads as the program's.
    const expected =
      error instanceof OperatorError ||
      ['ConfigError', 'StorageUnavailableError'].includes((error as Error).name);
    const message = maskCredentials(
      error instanceof Error ? error.message.split('\n')[0]! : String(error),
    );
    process.stderr.write(expected ? `${message}\n` : `trackway: ${message}\n`);
    if (wantsStackTraces() && error instanceof Error && error.stack) {
      process.stderr.write(`${maskCredentials(error.stack)}\n`);
    }
    return 1;
  }
}
