/**
 * In-process test harness: a real store, the real app, `app.inject()` for requests. The store
 * matrix (`testStores()`) is how every HTTP-level suite runs against each storage adapter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createAccount } from '../src/domain/accounts/accounts.ts';
import type { PlanName } from '../src/domain/accounts/plans.ts';
import type { Account } from '../src/domain/model.ts';
import type { Clock, RateLimiter, Store } from '../src/domain/ports.ts';
import { type App, buildApp } from '../src/http/app.ts';
import { createLogger } from '../src/logger.ts';
import { MemoryRateLimiter } from '../src/rate-limit/memory.ts';
import { SqliteStore } from '../src/storage/sqlite/store.ts';

export interface StoreKind {
  name: string;
  open(): Promise<Store>;
}

export function testStores(): StoreKind[] {
  return [
    {
      name: 'sqlite',
      async open() {
        return SqliteStore.open(':memory:');
      },
    },
  ];
}

/** A clock tests can move; starts at the real time so "now" checks stay meaningful. */
export class TestClock implements Clock {
  current = new Date();
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at);
  }
}

export interface TestAccount {
  account: Account;
  apiKey: string;
  headers: { authorization: string };
}

export interface Harness {
  app: App;
  store: Store;
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
  onOutboxWrite?: () => void;
  /** Defaults to the in-process limiter, as in production without Redis; `null` for none. */
  rateLimiter?: RateLimiter | null;
  /** Take the client IP from `X-Forwarded-For` (Fastify trustProxy). */
  trustProxy?: boolean;
}

export async function startHarness(
  kind: StoreKind,
  options: HarnessOptions = {},
): Promise<Harness> {
  const destinations = options.destinations ?? { allowPrivate: true, allowHttp: true };
  const store = await kind.open();
  const clock = new TestClock();
  const app = await buildApp({
    store,
    clock,
    config: {
      trustProxy: options.trustProxy ?? false,
      webhookAllowPrivate: destinations.allowPrivate,
      webhookAllowHttp: destinations.allowHttp,
    },
    logger: createLogger('silent'),
    rateLimiter: options.rateLimiter === undefined ? new MemoryRateLimiter() : options.rateLimiter,
    ...(options.onOutboxWrite && { onOutboxWrite: options.onOutboxWrite }),
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
      await store.close();
    },
  };
}

export function tempDir(prefix = 'trackway-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
