/**
 * `trackway <command>`: the operator's interface (contract §9). Every command takes `--json`
 * and then prints exactly one JSON object: results on stdout, errors on stderr
 * (`{"error", "message"}`, plus `usage` for a usage error). Usage is printed only when asked
 * for (`--help`, `help`) or after a usage error, and then only the part that concerns the
 * command at hand.
 */

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ListeningMessage } from '../cluster/primary.ts';
import { type Config, type Env, loadConfig, processesFor, wantsStackTraces } from '../config.ts';
import {
  createAccount,
  createKey,
  effectiveLimits,
  listAccounts,
  listKeys,
  OperatorError,
  type PlanChange,
  revokeKey,
  setPlan,
  showAccount,
} from '../domain/accounts/accounts.ts';
import {
  isPlanName,
  isSubscriptionStatus,
  PLAN_NAMES,
  SUBSCRIPTION_STATUSES,
} from '../domain/accounts/plans.ts';
import { eraseExpiredMatchKeys } from '../domain/lifecycle/match-keys-sweep.ts';
import { purgeExpired, retentionOf, setRetentionDays } from '../domain/lifecycle/retention.ts';
import { type Account, KEY_SCOPES, type KeyScope, type ManagedKey } from '../domain/model.ts';
import { systemClock } from '../domain/ports/clock.ts';
import { maskCredentials } from '../redact.ts';
import { openStore } from '../storage/index.ts';

/** Exit status of a command line the CLI cannot run as written (as BSD's EX_USAGE-like 2). */
const USAGE_EXIT = 2;

class UsageError extends Error {
  constructor(
    message: string,
    /** The usage text worth showing with the message: the command's, or its group's. */
    readonly usage: string | null,
  ) {
    super(message);
  }
}

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  name: { type: 'string' },
  plan: { type: 'string' },
  status: { type: 'string' },
  account: { type: 'string' },
  'key-id': { type: 'string' },
  scope: { type: 'string' },
  'requests-per-minute': { type: 'string' },
  'daily-limit': { type: 'string' },
  'retention-days': { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

interface CommandSpec {
  /** After `trackway `: the command and its options. */
  synopsis: string;
  summary: string;
  /** Options the command takes besides `--json` and `--help`; any other is a usage error. */
  options: OptionName[];
}

const COMMANDS = {
  serve: {
    synopsis: 'serve',
    summary:
      'start the HTTP API (and the delivery workers: webhooks, and forwarding to ad platforms)',
    options: [],
  },
  worker: {
    synopsis: 'worker',
    summary:
      'run the delivery workers alone: webhooks, and forwarding to ad platforms (with TRACKWAY_WORKER=false on the API)',
    options: [],
  },
  migrate: { synopsis: 'migrate', summary: 'apply pending database migrations', options: [] },
  'accounts create': {
    synopsis: 'accounts create --name N --plan P',
    summary: 'create an account and print its first API key (once)',
    options: ['name', 'plan'],
  },
  'accounts list': {
    synopsis: 'accounts list',
    summary: 'list every account with its plan and status, oldest first',
    options: [],
  },
  'accounts show': {
    synopsis: 'accounts show --account A',
    summary: 'one account: plan, status, limits and keys (prefixes only)',
    options: ['account'],
  },
  'keys create': {
    synopsis: 'keys create --account A [--name N] [--scope full|ingest]',
    summary: 'create another API key for an account (ingest: the track routes only)',
    options: ['account', 'name', 'scope'],
  },
  'keys list': {
    synopsis: 'keys list --account A',
    summary: "list an account's keys (revoked ones included)",
    options: ['account'],
  },
  'keys revoke': {
    synopsis: 'keys revoke --key-id K',
    summary: 'revoke a key',
    options: ['key-id'],
  },
  'plans set': {
    synopsis:
      'plans set --account A [--plan P] [--status S] [--requests-per-minute N] [--daily-limit N] [--retention-days N]',
    summary: 'change plan, subscription status or (enterprise) custom limits and retention',
    options: ['account', 'plan', 'status', 'requests-per-minute', 'daily-limit', 'retention-days'],
  },
  purge: {
    synopsis: 'purge',
    summary:
      "delete events older than their account's retention, and raw match keys past their 7 days, now (serve does both on its own)",
    options: [],
  },
  openapi: { synopsis: 'openapi', summary: 'print the OpenAPI 3.1 document', options: [] },
  help: { synopsis: 'help [command]', summary: 'print this help, or one command’s', options: [] },
} satisfies Record<string, CommandSpec>;

type CommandName = keyof typeof COMMANDS;
const GROUPS = ['accounts', 'keys', 'plans'] as const;

const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name);
const isGroup = (name: string): name is (typeof GROUPS)[number] =>
  (GROUPS as readonly string[]).includes(name);

/** The commands a help topic covers: all, one group's, or one command. */
function commandsFor(topic: string | null): CommandName[] {
  const all = Object.keys(COMMANDS) as CommandName[];
  if (topic === null) return all;
  if (isCommand(topic)) return [topic];
  return all.filter((name) => name.startsWith(`${topic} `));
}

function usageText(topic: string | null): string {
  const names = commandsFor(topic);
  const lines = names.flatMap((name) => {
    const spec: CommandSpec = COMMANDS[name];
    return [`  trackway ${spec.synopsis} [--json]`, `      ${spec.summary}`];
  });
  const footer =
    topic === null || topic === 'plans' || topic === 'plans set' || topic === 'accounts create'
      ? [
          '',
          `Plans: ${PLAN_NAMES.join(', ')}. Statuses: ${SUBSCRIPTION_STATUSES.join(', ')}.`,
          'Configuration comes from the environment (DATABASE_URL, PORT, HOST, …; see README).',
          '`trackway --version` prints the version.',
        ]
      : [];
  return [names.length === 1 ? 'Usage:' : 'Usage:', ...lines, ...footer].join('\n');
}

function helpJson(topic: string | null) {
  return {
    usage: usageText(topic),
    commands: commandsFor(topic).map((name) => ({
      command: name,
      synopsis: `trackway ${COMMANDS[name].synopsis}`,
      summary: COMMANDS[name].summary,
    })),
  };
}

function required(values: Values, command: CommandName, name: OptionName): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') {
    throw new UsageError(`--${name} is required`, usageText(command));
  }
  return value;
}

/**
 * Decimal digits only (Number() would also take `0x10` and `1e3`), and no larger than a
 * double holds exactly: both stores keep limits as 64-bit integers.
 */
function positiveInteger(
  values: Values,
  name: 'requests-per-minute' | 'daily-limit' | 'retention-days',
) {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `--${name} must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, in decimal digits`,
      usageText('plans set'),
    );
  }
  return n;
}

/** As the keys API takes it: trimmed, 1 to 100 characters. */
function keyName(values: Values, command: CommandName) {
  const name = values.name?.trim();
  if (name === undefined) return undefined;
  if (name === '' || name.length > 100) {
    throw new UsageError('--name must be 1 to 100 characters', usageText(command));
  }
  return name;
}

function keyScope(values: Values, command: CommandName): KeyScope | undefined {
  const scope = values.scope;
  if (scope === undefined || (KEY_SCOPES as readonly string[]).includes(scope)) {
    return scope as KeyScope | undefined;
  }
  throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(', ')}`, usageText(command));
}

function planName(values: Values, command: CommandName) {
  const plan = values.plan;
  if (plan === undefined || isPlanName(plan)) return plan;
  throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`, usageText(command));
}

interface Output {
  json: unknown;
  text: string;
}

async function withStore<T>(
  env: Env,
  run: (op: {
    store: Awaited<ReturnType<typeof openStore>>;
    clock: typeof systemClock;
  }) => Promise<T>,
): Promise<T> {
  const config = loadConfig(env);
  const store = await openStore(config.database, {
    poolSize: config.databasePoolSize,
    ingest: config.pgIngest,
  });
  try {
    await store.migrate();
    return await run({ store, clock: systemClock });
  } finally {
    await store.close();
  }
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function accountJson(account: Account) {
  const limits = effectiveLimits(account);
  return {
    // `id` as the API names an object's own id; `account_id` as contract §9 names it (kept:
    // scripts rely on it).
    id: account.id,
    account_id: account.id,
    name: account.name,
    plan: account.plan,
    status: account.status,
    limits: { requests_per_minute: limits.requestsPerMinute, daily_limit: limits.dailyLimit },
    created_at: iso(account.createdAt),
  };
}

function keyJson(key: ManagedKey) {
  return {
    id: key.id,
    key_id: key.id,
    name: key.name,
    scope: key.scope,
    prefix: key.prefix,
    last4: key.last4,
    created_at: iso(key.createdAt),
    revoked_at: iso(key.revokedAt),
  };
}

function keyLines(keys: ManagedKey[]): string {
  return (
    keys
      .map(keyJson)
      .map(
        (k) =>
          `${k.key_id}  ${k.prefix}…${k.last4}  ${k.scope}  created ${k.created_at}${k.revoked_at ? `  revoked ${k.revoked_at}` : ''}${k.name ? `  ${k.name}` : ''}`,
      )
      .join('\n') || 'No keys.'
  );
}

async function runCommand(command: CommandName, values: Values, env: Env): Promise<Output> {
  switch (command) {
    case 'migrate':
      return withStore(env, async () => ({
        json: { migrated: true },
        text: 'Migrations applied.',
      }));
    case 'accounts create': {
      const name = required(values, command, 'name');
      required(values, command, 'plan');
      const plan = planName(values, command)!;
      const { account, apiKey } = await withStore(env, (op) => createAccount(op, { name, plan }));
      return {
        json: { id: account.id, account_id: account.id, api_key: apiKey },
        text: `Created account ${account.id} (${account.name}, plan ${plan}).\nAPI key (shown only once): ${apiKey}`,
      };
    }
    case 'accounts list': {
      const accounts = await withStore(env, (op) => listAccounts(op));
      const rows = accounts.map(accountJson);
      return {
        json: { accounts: rows },
        text:
          rows
            .map(
              (a) => `${a.account_id}  ${a.plan}  ${a.status}  created ${a.created_at}  ${a.name}`,
            )
            .join('\n') || 'No accounts.',
      };
    }
    case 'accounts show': {
      const accountId = required(values, command, 'account');
      const { account, keys } = await withStore(env, (op) => showAccount(op, accountId));
      const shown = accountJson(account);
      return {
        json: { ...shown, keys: keys.map(keyJson) },
        text: [
          `${shown.account_id}  ${shown.name}`,
          `  plan ${shown.plan}, status ${shown.status}, ${shown.limits.requests_per_minute}/min, ${shown.limits.daily_limit}/day`,
          `  created ${shown.created_at}`,
          'Keys:',
          keyLines(keys).replace(/^/gm, '  '),
        ].join('\n'),
      };
    }
    case 'keys create': {
      const accountId = required(values, command, 'account');
      const name = keyName(values, command);
      const scope = keyScope(values, command);
      const key = await withStore(env, (op) =>
        createKey(op, accountId, {
          ...(name !== undefined && { name }),
          ...(scope !== undefined && { scope }),
        }),
      );
      const named = key.name === '' ? '' : ` "${key.name}"`;
      return {
        json: {
          id: key.keyId,
          key_id: key.keyId,
          api_key: key.apiKey,
          account_id: key.accountId,
          name: key.name,
          scope: key.scope,
        },
        text: `Created key ${key.keyId}${named} (scope ${key.scope}) for ${key.accountId}.\nAPI key (shown only once): ${key.apiKey}`,
      };
    }
    case 'keys list': {
      const accountId = required(values, command, 'account');
      const keys = await withStore(env, (op) => listKeys(op, accountId));
      return { json: { keys: keys.map(keyJson) }, text: keyLines(keys) };
    }
    case 'keys revoke': {
      const keyId = required(values, command, 'key-id');
      const key = await withStore(env, (op) => revokeKey(op, keyId));
      return {
        json: {
          id: key.id,
          key_id: key.id,
          account_id: key.accountId,
          revoked_at: iso(key.revokedAt),
        },
        text: `Revoked key ${key.id}.`,
      };
    }
    case 'plans set': {
      const accountId = required(values, command, 'account');
      const change: PlanChange = {};
      const plan = planName(values, command);
      if (plan !== undefined) change.plan = plan;
      if (values.status !== undefined) {
        if (!isSubscriptionStatus(values.status)) {
          throw new UsageError(
            `--status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`,
            usageText(command),
          );
        }
        change.status = values.status;
      }
      const rpm = positiveInteger(values, 'requests-per-minute');
      const daily = positiveInteger(values, 'daily-limit');
      if (rpm !== undefined) change.requestsPerMinute = rpm;
      if (daily !== undefined) change.dailyLimit = daily;
      const retentionDays = positiveInteger(values, 'retention-days');
      if (Object.keys(change).length === 0 && retentionDays === undefined) {
        throw new UsageError(
          'plans set needs at least one of --plan, --status, --requests-per-minute, --daily-limit, --retention-days',
          usageText(command),
        );
      }
      const { after, retention } = await withStore(env, async (op) => {
        // Refused before anything changes; then the plan first, so `--plan enterprise
        // --retention-days N` works in one command.
        const current = await op.store.accounts.getAccount(accountId);
        if (
          current &&
          retentionDays !== undefined &&
          (change.plan ?? current.plan) !== 'enterprise'
        ) {
          throw new OperatorError(
            `--retention-days is for enterprise accounts only; ${accountId} is on ${change.plan ?? current.plan}`,
          );
        }
        const changed =
          Object.keys(change).length > 0
            ? (await setPlan(op, accountId, change)).after
            : await op.store.accounts.getAccount(accountId);
        if (!changed) throw new OperatorError(`No such account: ${accountId}`);
        if (retentionDays !== undefined) await setRetentionDays(op, accountId, retentionDays);
        return { after: changed, retention: await retentionOf(op.store, changed) };
      });
      const { id, account_id, plan: newPlan, status, limits } = accountJson(after);
      return {
        json: { id, account_id, plan: newPlan, status, limits, retention_days: retention },
        text: `Account ${account_id}: plan ${newPlan}, status ${status}, ${limits.requests_per_minute}/min, ${limits.daily_limit}/day, events kept ${retention === null ? 'forever' : `${retention} days`}.`,
      };
    }
    case 'purge': {
      const { deleted, erased } = await withStore(env, async (op) => ({
        deleted: await purgeExpired(op),
        erased: await eraseExpiredMatchKeys(op),
      }));
      return {
        json: { deleted, match_keys_erased: erased },
        text: `Purged ${deleted} events past retention. Erased the raw match keys of ${erased} events past 7 days.`,
      };
    }
    case 'openapi': {
      const { renderOpenApi } = await import('../http/openapi.ts');
      const document = await renderOpenApi();
      return { json: document, text: JSON.stringify(document, null, 2) };
    }
    default:
      // serve, worker and help are handled by main().
      throw new UsageError(`Unknown command: ${command}`, null);
  }
}

/** Runs until SIGTERM/SIGINT, then drains and exits 0. */
function exitOnSignal(server: { close(): Promise<void> }, io: Io): void {
  const stop = (signal: string) => {
    io.stderr.write(`${signal} received: draining\n`);
    server.close().then(
      () => process.exit(0),
      (error) => {
        io.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

async function serve(env: Env, json: boolean, io: Io): Promise<void> {
  const config = loadConfig(env);
  const { default: cluster } = await import('node:cluster');
  if (cluster.isWorker) return serveAsClusterProcess(config, io);
  const { availableParallelism } = await import('node:os');
  const processes = processesFor(config, availableParallelism());
  if (processes > 1) return servePrimary(config, processes, json, io);
  const { startServer } = await import('../main.ts');
  const starting = startServer(config, {
    out: (text) => io.stdout.write(`${text}\n`),
    json,
  });
  // Handlers first: whoever reads "listening" may send SIGTERM at once, before this process
  // runs its next line. A signal during start-up drains once start-up is done.
  exitOnSignal({ close: async () => (await starting).close() }, io);
  await starting;
}

/** The primary of several HTTP processes (src/cluster/primary.ts); it prints the banner. */
async function servePrimary(config: Config, processes: number, json: boolean, io: Io) {
  const { startPrimary } = await import('../cluster/primary.ts');
  const { createLogger } = await import('../logger.ts');
  const starting = startPrimary(processes, createLogger(config.logLevel));
  exitOnSignal({ close: async () => (await starting).close() }, io);
  const { url } = await starting;
  io.stdout.write(
    json
      ? `${JSON.stringify({ listening: url, processes })}\n`
      : `Trackway is listening on ${url} (${processes} processes, ${config.database.kind})\n`,
  );
}

/** One HTTP process of several: a whole `serve` whose banner goes to the primary. */
async function serveAsClusterProcess(config: Config, io: Io): Promise<void> {
  const { startServer } = await import('../main.ts');
  const { PrimaryLimits } = await import('../cluster/shared-limits.ts');
  const send = (message: unknown, done: (error: Error | null) => void) =>
    process.send?.(message, undefined, undefined, done);
  const shared = new PrimaryLimits({ send, on: (event, listener) => process.on(event, listener) });
  const starting = startServer(config, { out: () => {}, shared });
  // A process that cannot start says why (main prints it) and leaves: the open IPC channel
  // would otherwise keep it alive, and the primary waiting for it.
  const { default: cluster } = await import('node:cluster');
  starting.catch(() => cluster.worker?.disconnect());
  exitOnSignal({ close: async () => (await starting).close() }, io);
  const { url } = await starting;
  send({ tw: 'listening', url } satisfies ListeningMessage, () => {});
}

async function runWorker(env: Env, json: boolean, io: Io): Promise<void> {
  const { startWorker } = await import('../main.ts');
  const { createLogger } = await import('../logger.ts');
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  const store = await openStore(config.database, {
    poolSize: config.databasePoolSize,
    ingest: config.pgIngest,
  });
  let worker: ReturnType<typeof startWorker>;
  try {
    await store.migrate();
    worker = startWorker(config, store, logger);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  // Handlers before the announcement (see serve()).
  exitOnSignal(
    {
      async close() {
        await worker.stop();
        await store.close();
      },
    },
    io,
  );
  logger.info('delivery worker started');
  io.stdout.write(
    json
      ? `${JSON.stringify({ worker: 'running', pid: process.pid })}\n`
      : 'Trackway delivery worker running\n',
  );
}

/** The installed version, from the package.json beside src/ and dist/ alike. */
function version(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Env;
}

/** What went wrong, as the JSON error body names it (the HTTP API's words where they fit). */
function errorKind(error: Error): string {
  if (error instanceof UsageError) return 'Invalid usage';
  if (error instanceof OperatorError) return 'Invalid request';
  if (error.name === 'ConfigError') return 'Invalid configuration';
  if (error.name === 'StorageUnavailableError') return 'Storage unavailable';
  return 'Internal error';
}

/**
 * Resolves the command line to one command, or to a help topic. `help` and `--help` print to
 * stdout and exit 0; a group alone (`trackway keys`) is a usage error, like any command line
 * that names nothing runnable, and shows that group's part of the usage on stderr.
 */
function resolve(
  positionals: string[],
  help: boolean,
): { command: CommandName } | { help: string | null } {
  const [first, second, ...rest] = positionals;
  if (first === undefined) {
    if (help) return { help: null };
    throw new UsageError('No command given', usageText(null));
  }
  if (first === 'help') {
    const topic = [second, ...rest].filter(Boolean).join(' ') || null;
    if (topic !== null && !isCommand(topic) && !isGroup(topic)) {
      throw new UsageError(`No help for "${topic}": no such command`, null);
    }
    return { help: topic };
  }
  if (isGroup(first)) {
    if (second === undefined) {
      if (help) return { help: first };
      const subcommands = commandsFor(first).map((name) => name.split(' ')[1]);
      throw new UsageError(`${first} needs one of: ${subcommands.join(', ')}`, usageText(first));
    }
    const name = `${first} ${second}`;
    if (!isCommand(name)) throw new UsageError(`Unknown command: ${name}`, usageText(first));
    if (rest.length > 0) throw new UsageError(`Unexpected argument: ${rest[0]}`, usageText(name));
    return help ? { help: name } : { command: name };
  }
  if (!isCommand(first)) {
    throw new UsageError(`Unknown command: ${first} (run "trackway help" for the list)`, null);
  }
  if (second !== undefined) {
    throw new UsageError(`Unexpected argument: ${second}`, usageText(first));
  }
  return help ? { help: first } : { command: first };
}

/** Options given that the command does not take: said, never silently ignored. */
function checkOptions(command: CommandName, values: Values): void {
  const allowed: readonly string[] = (COMMANDS[command] as CommandSpec).options;
  for (const name of Object.keys(values)) {
    if (name === 'json' || name === 'help' || allowed.includes(name)) continue;
    throw new UsageError(`${command} does not take --${name}`, usageText(command));
  }
}

/**
 * The positionals of a command line that failed strict parsing, to find whose usage to show.
 */
function loosePositionals(argv: string[]): string[] {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: false })
      .positionals;
  } catch {
    return [];
  }
}

export async function main(
  argv: string[],
  io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  const json = argv.includes('--json');
  // A reader that stops early (`trackway openapi | head`) closes the pipe: what it did not
  // read is not wanted, which is no error. Anything else on stdout still is.
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  const fail = (error: Error, code: number): number => {
    const usage = error instanceof UsageError ? error.usage : null;
    if (json) {
      io.stderr.write(
        `${JSON.stringify({ error: errorKind(error), message: error.message, ...(usage && { usage }) })}\n`,
      );
    } else {
      io.stderr.write(`${error.message}\n${usage ? `\n${usage}\n` : ''}`);
    }
    return code;
  };

  let values: Values;
  let target: ReturnType<typeof resolve> | { version: true };
  try {
    let parsed: { values: Values; positionals: string[] };
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      // Only the words naming the command: what follows may be the bad option's value.
      const positionals = loosePositionals(argv).slice(0, 2);
      let usage: string | null = null;
      try {
        const found = resolve(
          isGroup(positionals[0] ?? '') ? positionals : positionals.slice(0, 1),
          true,
        );
        usage = usageText('command' in found ? found.command : found.help);
      } catch {}
      // Node's hint about `--` is for positionals starting with a dash, which no command takes.
      throw new UsageError((error as Error).message.split('. To specify')[0]!, usage);
    }
    values = parsed.values;
    // `trackway --version` alone; with a command it is an option that command does not take.
    target =
      values.version === true && parsed.positionals.length === 0
        ? { version: true }
        : resolve(parsed.positionals, values.help === true);
    if ('command' in target) checkOptions(target.command, values);
  } catch (error) {
    return fail(error as Error, USAGE_EXIT);
  }

  try {
    if ('version' in target) {
      io.stdout.write(
        json ? `${JSON.stringify({ version: version() })}\n` : `trackway ${version()}\n`,
      );
      return 0;
    }
    if ('help' in target) {
      io.stdout.write(
        json ? `${JSON.stringify(helpJson(target.help))}\n` : `${usageText(target.help)}\n`,
      );
      return 0;
    }
    const { command } = target;
    if (command === 'serve' || command === 'worker') {
      await (command === 'serve' ? serve : runWorker)(io.env, json, io);
      return -1; // keeps running
    }
    const output = await runCommand(command, values, io.env);
    io.stdout.write(json ? `${JSON.stringify(output.json)}\n` : `${output.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(error, USAGE_EXIT);
    const failure = error instanceof Error ? error : new Error(String(error));
    // One line (credentials and keys masked); the stack only when debug logs were asked for.
    failure.message = maskCredentials(failure.message.split('\n')[0] ?? '');
    // Mistakes an operator can fix (bad config, database unreachable) read as they are;
    // anything else is prefixed so it reads as the program's.
    const expected =
      failure instanceof OperatorError ||
      ['ConfigError', 'StorageUnavailableError'].includes(failure.name);
    if (expected || json) fail(failure, 1);
    else io.stderr.write(`trackway: ${failure.message}\n`);
    if (wantsStackTraces(io.env) && failure.stack) {
      io.stderr.write(`${maskCredentials(failure.stack)}\n`);
    }
    return 1;
  }
}
