import { systemClock } from '../domain/ports/clock.ts';
import { createLogger } from '../logger.ts';
import { SqliteStore } from '../storage/sqlite/store.ts';
import { buildApp } from './app.ts';

/** The OpenAPI document as served at /v1/openapi.json, generated from the route schemas. */
export async function renderOpenApi(): Promise<Record<string, unknown>> {
  const store = SqliteStore.open(':memory:');
  const app = await buildApp({
    store,
    clock: systemClock,
    config: { trustProxy: false, webhookAllowPrivate: true, webhookAllowHttp: true },
    logger: createLogger('silent'),
    rateLimiter: null,
  });
  await app.ready();
  const document = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  await store.close();
  return document;
}
