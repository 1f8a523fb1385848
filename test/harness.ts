/**
 * In-process test harness: a real store, the real app, `app.inject()` for requests. The store
 * matrix (`testStores()`) is how every HTTP-level suite runs against each storage adapter.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import { createAccessTokens } from '../src/delivery/access-tokens.ts';
import { createPlatformGateway, createPlatformSender } from '../src/delivery/platform-sender.ts';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import type { PlanName } from '../src/domain/accounts/plans.ts';
import { CommitSignal } from '../src/domain/commits.ts';
import type { Destination } from '../src/domain/forwarding/model.ts';
import type { Platform } from '../src/domain/forwarding/platforms/registry.ts';
import { newId, newPublishableKey } from '../src/domain/ids.ts';
import type { Account, Pixel, TrackedEvent, WebhookEndpoint } from '../src/domain/model.ts';
import type { Clock, Timers } from '../src/domain/ports/clock.ts';
import type { CommitNotifier } from '../src/domain/ports/commit-notifier.ts';
import type { RateLimiter } from '../src/domain/ports/rate-limiter.ts';
import type { Store } from '../src/domain/ports/store.ts';
import { type App, type AppDeps, buildApp } from '../src/http/app.ts';
import type { Metrics } from '../src/http/metrics.ts';
import { MemoryRateLimiter } from '../src/rate-limit/memory.ts';
import type { StreamSlots } from '../src/rate-limit/stream-slots.ts';
import type { IngestPath } from '../src/storage/postgres/ingest-path.ts';
import { PostgresStore } from '../src/storage/postgres/store.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';
import { testLogger } from './log-capture.ts';

export interface StoreKind {
  name: string;
  /** A fresh store; `commits` is told what each write committed (as main.ts opens it). */
  open(commits?: CommitNotifier): Promise<Store>;
}

/** The PostgreSQL server the suites use; trust auth on localhost by default. */
export const TEST_DATABASE_URL =
  process.env['TEST_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';

let schemaCounter = 0;

/** A schema name no other test (in this or another process) uses. */
export function freshSchemaName(): string {
  schemaCounter += 1;
  return `t_${process.pid}_${schemaCounter}_${randomBytes(3).toString('hex')}`;
}

/** `TEST_DATABASE_URL` pointed at `schema` (Trackway's `?schema=` parameter). */
export function postgresUrl(schema: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/**
 * The options of a suite that needs PostgreSQL itself: skipped, with the reason, where it does
 * not answer. Never under CI: there postgresAvailable() throws instead.
 */
export async function postgresSuite(): Promise<{ skip: string | false }> {
  return { skip: !(await postgresAvailable()) && 'PostgreSQL is not available' };
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

let postgresProbe: Promise<boolean> | undefined;

/**
 * Whether the test PostgreSQL answers. Without it the suites still run on SQLite with one
 * warning, so a laptop without PostgreSQL can work; on CI (`CI` set) a missing server is an
 * error, so the PostgreSQL half of the matrix can never be skipped silently.
 */
export function postgresAvailable(): Promise<boolean> {
  postgresProbe ??= (async () => {
    const client = new pg.Client({
      connectionString: TEST_DATABASE_URL,
      connectionTimeoutMillis: 3_000,
    });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch (error) {
      const reason = `PostgreSQL at ${TEST_DATABASE_URL} does not answer (${(error as Error).message})`;
      if (process.env['CI']) throw new Error(`${reason}; CI requires it (set TEST_DATABASE_URL)`);
      process.stderr.write(`warning: ${reason}; running on SQLite only\n`);
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return postgresProbe;
}

/**
 * A real file, as users run it (WAL mode, commits flushed through wal-sync.ts), in its own
 * folder that close() removes.
 */
const sqliteKind: StoreKind = {
  name: 'sqlite',
  async open(commits) {
    const dir = tempDir('trackway-store-');
    const store = SqliteStore.open(join(dir.path, 'trackway.db'), commits ? { commits } : {});
    const close = store.close.bind(store);
    store.close = async () => {
      await close();
      dir.remove();
    };
    return store;
  },
};

/**
 * Each open() gets its own fresh schema, migrated; close() drops it. `ingest` left to `auto`:
 * the one-statement path on plain PostgreSQL, the per-account one where TEST_DATABASE_URL is
 * a Citus coordinator.
 */
const postgresKind = (name: string, ingest?: IngestPath): StoreKind => ({
  name,
  async open(commits) {
    const schema = freshSchemaName();
    const store = await PostgresStore.open({
      url: postgresUrl(schema),
      poolSize: 10,
      ...(commits && { commits }),
      ...(ingest && { ingest }),
    });
    await store.migrate();
    const close = store.close.bind(store);
    store.close = async () => {
      await close();
      await dropSchema(schema);
    };
    return store;
  },
});

/**
 * The store matrix: every HTTP-level and contract suite runs once per entry. The storage
 * contract suites ask for `perAccountIngest` too: PostgreSQL again with the per-account ingest
 * path forced (postgres/per-account-ingest.ts, Citus's), so every outcome, count and message
 * is proven the same as the one-statement path's.
 */
export async function testStores(
  options: { perAccountIngest?: boolean } = {},
): Promise<StoreKind[]> {
  const postgres = [postgresKind('postgres')];
  if (options.perAccountIngest) postgres.push(postgresKind('postgres-per-account', 'per-account'));
  const kinds = (await postgresAvailable()) ? [sqliteKind, ...postgres] : [sqliteKind];
  // `TRACKWAY_TEST_STORES=postgres` runs a suite on the named stores only (account-scope.test.ts
  // runs the store suites again on PostgreSQL to read the statements they cause).
  const only = process.env['TRACKWAY_TEST_STORES']?.split(',');
  return only ? kinds.filter((k) => only.includes(k.name)) : kinds;
}

/**
 * A clock tests can move; starts at the real time so "now" checks stay meaningful. Its timers
 * fire when the clock is moved past them (in order, synchronously), except those due at once,
 * which run on the next turn of the event loop as a real zero-delay timer would.
 */
export class TestClock implements Clock, Timers {
  current = new Date();
  private timers: Array<{ at: number; callback: () => void }> = [];
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at);
    this.fireDue();
  }
  advance(ms: number): void {
    this.set(new Date(this.current.getTime() + ms));
  }
  setTimer(callback: () => void, ms: number): () => void {
    if (ms <= 0) {
      const immediate = setImmediate(callback);
      return () => clearImmediate(immediate);
    }
    const timer = { at: this.current.getTime() + ms, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }
  private fireDue(): void {
    const now = this.current.getTime();
    const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
    this.timers = this.timers.filter((t) => t.at > now);
    for (const timer of due) timer.callback();
  }
}

export interface TestAccount {
  account: Account;
  apiKey: string;
  headers: { authorization: string };
}

export interface Harness {
  app: App;
  /** The store as the app sees it, opened with the app's CommitSignal. */
  store: Store;
  /** The same store as its adapter's type (e.g. a PostgresStore, for its schema). */
  adapter: Store;
  clock: TestClock;
  account(plan?: PlanName): Promise<TestAccount>;
  pixel(owner: TestAccount, body?: Record<string, unknown>): Promise<string>;
  track(owner: TestAccount, body: unknown): Promise<LightMyRequestResponse>;
  request(owner: TestAccount | null, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Webhook destination policy; tests default to allowing loopback http receivers. */
  destinations?: { allowPrivate: boolean; allowHttp: boolean };
  /** Called whenever the store announces committed webhook messages (the worker's wake). */
  onOutboxWrite?: () => void;
  /** Defaults to the in-process limiter, as in production without Redis; `null` for none. */
  rateLimiter?: RateLimiter | null;
  /** Take the client IP from `X-Forwarded-For` (Fastify trustProxy). */
  trustProxy?: Config['trustProxy'];
  /** Between live-tail heartbeats (the app's default is 15 s). */
  liveTailHeartbeatMs?: number;
  /** The process's metrics, to share with a worker the test runs (a fresh set otherwise). */
  metrics?: Metrics;
  /** Where destination test sends go (a local platform server), by platform. */
  platformUrls?: Record<Platform, string>;
  /** Where test sends get OAuth tokens (a local stand-in), by platform. */
  tokenUrls?: Partial<Record<Platform, string>>;
  /** The app's logger, for a test that reads what is logged (defaults to the capture). */
  logger?: Logger;
  /** Live-tail slots (e.g. Redis-backed, shared by two apps); per app when left out. */
  streamSlots?: StreamSlots;
  /** Batch requests in flight and waiting (http/batch-admission.ts); its defaults when left out. */
  batchAdmission?: AppDeps['batchAdmission'];
}

export async function startHarness(
  kind: StoreKind,
  options: HarnessOptions = {},
): Promise<Harness> {
  const destinations = options.destinations ?? { allowPrivate: true, allowHttp: true };
  const commits = new CommitSignal();
  if (options.onOutboxWrite) commits.onOutboxWritten(options.onOutboxWrite);
  // As main.ts opens it: the store's runner tells the worker and the metrics of each commit.
  const adapter = await kind.open(commits);
  const store = adapter;
  const clock = new TestClock();
  const platforms = options.platformUrls
    ? createPlatformGateway(
        options.platformUrls,
        createPlatformSender(),
        createAccessTokens({ urls: options.tokenUrls ?? {} }),
      )
    : undefined;
  const app = await buildApp({
    store,
    clock,
    commits,
    config: {
      trustProxy: options.trustProxy ?? false,
      webhookAllowPrivate: destinations.allowPrivate,
      webhookAllowHttp: destinations.allowHttp,
    },
    logger: options.logger ?? testLogger(),
    rateLimiter: options.rateLimiter === undefined ? new MemoryRateLimiter() : options.rateLimiter,
    ...(options.metrics && { metrics: options.metrics }),
    ...(platforms && { platforms }),
    ...(options.streamSlots && { streamSlots: options.streamSlots }),
    ...(options.batchAdmission && { batchAdmission: options.batchAdmission }),
    ...(options.liveTailHeartbeatMs !== undefined && {
      liveTailHeartbeatMs: options.liveTailHeartbeatMs,
    }),
  });
  await app.ready();
  const request = (owner: TestAccount | null, options: InjectOptions) =>
    app.inject({
      ...options,
      headers: { ...(owner ? owner.headers : {}), ...(options.headers ?? {}) },
    });
  return {
    app,
    store,
    adapter,
    clock,
    async account(plan = 'pro') {
      const { account, apiKey } = await createAccount({ store, clock }, { name: 'Test', plan });
      return { account, apiKey, headers: { authorization: `Bearer ${apiKey}` } };
    },
    async pixel(owner, body = { name: 'Shop', domain: 'shop.example.com' }) {
      const res = await request(owner, { method: 'POST', url: '/v1/pixels', payload: body });
      if (res.statusCode !== 201)
        throw new Error(`pixel create failed: ${res.statusCode} ${res.body}`);
      return res.json().id as string;
    },
    track(owner, body) {
      return request(owner, {
        method: 'POST',
        url: '/v1/track',
        payload: body as InjectOptions['payload'],
      });
    },
    request,
    async close() {
      await app.close();
      await platforms?.close();
      await store.close();
    },
  };
}

export function tempDir(prefix = 'trackway-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A stored-event record with only what a storage test names; every optional field empty. */
export function bareEvent(
  fields: Pick<TrackedEvent, 'accountId' | 'pixelId' | 'eventId'> & Partial<TrackedEvent>,
): TrackedEvent {
  const now = new Date();
  return {
    eventName: 'Purchase',
    value: null,
    currency: null,
    timestamp: now,
    receivedAt: now,
    url: null,
    referrer: null,
    title: null,
    searchString: null,
    userData: null,
    customData: null,
    ...fields,
  };
}

/** A webhook endpoint of `accountId` as created at `at`, enabled, for the storage suites. */
export function webhookEndpoint(
  accountId: string,
  at: Date,
  overrides: Partial<WebhookEndpoint> = {},
): WebhookEndpoint {
  return {
    id: newId('wh'),
    accountId,
    url: 'https://hooks.example.com/in',
    events: ['event.tracked', 'pixel.created'],
    description: null,
    enabled: true,
    secret: 'whsec_test',
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    disabledReason: null,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** A pro account as created at `at`: the storage suites' account record. */
export function accountRecord(at: Date, overrides: Partial<Account> = {}): Account {
  return {
    id: newId('acct'),
    name: 'Acme',
    plan: 'pro',
    status: 'active',
    customRequestsPerMinute: null,
    customDailyLimit: null,
    createdAt: at,
    ...overrides,
  };
}

/** An active pixel of `accountId` as created at `at`, with a fresh publishable key. */
export function pixelRecord(accountId: string, at: Date, overrides: Partial<Pixel> = {}): Pixel {
  return {
    id: newId('px'),
    accountId,
    name: 'Shop',
    domain: 'shop.example.com',
    trackingDomain: 'shop.example.com',
    publishableKey: newPublishableKey(),
    previousPublishableKey: null,
    previousKeyExpiresAt: null,
    status: 'active',
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** An enabled Meta destination of `pixel` for all its events, as created at `at`. */
export function destinationRecord(
  pixel: Pick<Pixel, 'accountId' | 'id'>,
  at: Date,
  overrides: Partial<Destination> = {},
): Destination {
  return {
    id: newId('dst'),
    accountId: pixel.accountId,
    pixelId: pixel.id,
    type: 'meta',
    name: null,
    config: { pixel_id: '123', access_token: 'EAAB-token' },
    events: null,
    sources: null,
    enabled: true,
    state: 'active',
    lastError: null,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/**
 * A pro account and one pixel of it, written straight to `store` as created at `at`: the
 * storage contract suites' fixture (no app in between).
 */
export async function storedPixel(store: Store, at: Date): Promise<Pixel> {
  const account = accountRecord(at);
  await store.accounts.createAccount(account, null);
  const pixel = pixelRecord(account.id, at);
  await store.pixels.createPixel(pixel, null, []);
  return pixel;
}
