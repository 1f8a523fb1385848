/**
 * Webhook endpoint registration and the operator-facing verbs around deliveries. Every read and
 * write is scoped by the caller's account: another account's endpoint is "not found".
 */
import type { Context } from '../context.ts';
import { TrackwayError } from '../errors.ts';
import { pageOf } from '../events/list-events.ts';
import { newId } from '../ids.ts';
import {
  type DeliveryAttempt,
  WEBHOOK_EVENT_TYPES,
  type WebhookEndpoint,
  type WebhookEventType,
} from '../model.ts';
import type { PageQuery } from '../pixels/schemas.ts';
import type { DestinationCheck } from '../ports/destination-check.ts';
import type { CreateWebhookInput, TestWebhookInput, UpdateWebhookInput } from './schemas.ts';
import { newWebhookSecret, signingSecrets } from './signing.ts';

export interface WebhookContext extends Context {
  destinations: DestinationCheck;
}

/**
 * Endpoints an account may register (Stripe's number, contract §6): each one multiplies every
 * event into a signed POST, so an unbounded list would turn one batch into thousands of
 * requests aimed at any public host.
 */
export const ENDPOINTS_PER_ACCOUNT = 16;

/** How long the old secret keeps signing beside the new one after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function webhookObject(endpoint: WebhookEndpoint, now: Date) {
  const previous = signingSecrets(endpoint, now).standardWebhooks.length > 1;
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    created_at: endpoint.createdAt.toISOString(),
    previous_secret_expires_at: previous
      ? (endpoint.previousSecretExpiresAt?.toISOString() ?? null)
      : null,
  };
}

const notFound = (id: string) => new TrackwayError('not_found', `Webhook not found: ${id}`);

export async function createWebhook({
  ctx,
  input,
}: {
  ctx: WebhookContext;
  input: CreateWebhookInput;
}) {
  const url = await ctx.destinations.check(input.url);
  const now = ctx.clock.now();
  const endpoint: WebhookEndpoint = {
    id: newId('wh'),
    accountId: ctx.account.id,
    url: url.toString(),
    events: input.events ?? [...WEBHOOK_EVENT_TYPES],
    description: input.description ?? null,
    enabled: true,
    secret: newWebhookSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
  };
  const outcome = await ctx.store.webhooks.createEndpoint(endpoint, ENDPOINTS_PER_ACCOUNT);
  if (outcome === 'limit_exceeded') {
    throw new TrackwayError(
      'forbidden',
      `Subscription limit exceeded: an account may have ${ENDPOINTS_PER_ACCOUNT} webhook endpoints`,
    );
  }
  return { ...webhookObject(endpoint, now), secret: endpoint.secret };
}

export async function listWebhooks({ ctx }: { ctx: Context }) {
  const endpoints = await ctx.store.webhooks.listEndpoints(ctx.account.id);
  const now = ctx.clock.now();
  return { webhooks: endpoints.map((endpoint) => webhookObject(endpoint, now)) };
}

async function existing(ctx: Context, id: string): Promise<WebhookEndpoint> {
  const endpoint = await ctx.store.webhooks.getEndpoint(ctx.account.id, id);
  if (!endpoint) throw notFound(id);
  return endpoint;
}

export async function getWebhook({ ctx, id }: { ctx: Context; id: string }) {
  return webhookObject(await existing(ctx, id), ctx.clock.now());
}

export async function updateWebhook({
  ctx,
  id,
  input,
}: {
  ctx: WebhookContext;
  id: string;
  input: UpdateWebhookInput;
}) {
  const url =
    input.url === undefined ? undefined : (await ctx.destinations.check(input.url)).toString();
  const now = ctx.clock.now();
  const result = await ctx.store.webhooks.updateEndpoint(ctx.account.id, id, (current) => {
    const next: WebhookEndpoint = {
      ...current,
      url: url ?? current.url,
      events: input.events ?? current.events,
      description: input.description ?? current.description,
      enabled: input.enabled ?? current.enabled,
      updatedAt: now,
    };
    if (input.enabled === true && !current.enabled) {
      // A fresh start: the failure clock and the reason it was switched off are history.
      next.failingSince = null;
      next.disabledReason = null;
    }
    return { next, emit: [] };
  });
  if (!result) throw notFound(id);
  return webhookObject(result.after, now);
}

export async function deleteWebhook({ ctx, id }: { ctx: Context; id: string }) {
  const deleted = await ctx.store.webhooks.deleteEndpoint(ctx.account.id, id, ctx.clock.now());
  if (!deleted) throw notFound(id);
  return { id, deleted: true };
}

export async function rotateWebhookSecret({ ctx, id }: { ctx: Context; id: string }) {
  const now = ctx.clock.now();
  const result = await ctx.store.webhooks.updateEndpoint(ctx.account.id, id, (current) => ({
    next: {
      ...current,
      secret: newWebhookSecret(),
      previousSecret: current.secret,
      previousSecretExpiresAt: new Date(now.getTime() + ROTATION_OVERLAP_MS),
      updatedAt: now,
    },
    emit: [],
  }));
  if (!result) throw notFound(id);
  return { ...webhookObject(result.after, now), secret: result.after.secret };
}

function deliveryObject(attempt: DeliveryAttempt) {
  return {
    id: attempt.id,
    message_id: attempt.messageId,
    event: attempt.eventType,
    attempt: attempt.attempt,
    status: attempt.status,
    response_status_code: attempt.responseStatusCode,
    duration_ms: attempt.durationMs,
    error: attempt.error,
    response_body: attempt.responseBody,
    attempted_at: attempt.attemptedAt.toISOString(),
  };
}

export async function listDeliveries({
  ctx,
  id,
  query,
}: {
  ctx: Context;
  id: string;
  query: PageQuery;
}) {
  await existing(ctx, id);
  const page = pageOf(query);
  const { attempts, total } = await ctx.store.webhooks.listAttempts(ctx.account.id, id, page);
  return { deliveries: attempts.map(deliveryObject), total, ...page };
}

export async function retryDelivery({
  ctx,
  id,
  messageId,
}: {
  ctx: Context;
  id: string;
  messageId: string;
}) {
  await existing(ctx, id);
  const queued = await ctx.store.webhooks.retryDelivery(
    ctx.account.id,
    id,
    messageId,
    ctx.clock.now(),
  );
  if (queued === 'not_found')
    throw new TrackwayError('not_found', `Message not found: ${messageId}`);
  if (queued === 'in_flight') {
    // Sending it again now would deliver it twice at once; the attempt under way either
    // succeeds or is rescheduled, and a retry is accepted as soon as it is recorded.
    throw new TrackwayError(
      'conflict',
      `An attempt of ${messageId} is being sent now; retry once it has finished`,
    );
  }
  return { message_id: messageId, webhook_id: id, status: 'pending' as const };
}

/** Sample `data` for test sends, shaped exactly like the real thing. */
function sampleData(type: WebhookEventType, accountId: string, now: Date): Record<string, unknown> {
  const at = now.toISOString();
  const pixel = {
    id: 'px_test000000000000',
    name: 'Test pixel',
    domain: 'shop.example.com',
    tracking_domain: 'shop.example.com',
    status: 'active',
    created_at: at,
  };
  switch (type) {
    case 'event.tracked':
    case 'event.forwarded':
      return {
        pixel_id: pixel.id,
        event_name: 'Purchase',
        event_id: 'evt_test',
        value: 49.99,
        timestamp: at,
      };
    case 'pixel.created':
      return pixel;
    case 'pixel.updated':
      return { ...pixel, previous_attributes: { name: 'Old name' } };
    case 'subscription.updated':
      return {
        account_id: accountId,
        plan: 'pro',
        status: 'active',
        previous_plan: 'pro',
        limits: { requests_per_minute: 500, daily_limit: 720_000, pixels: 10 },
      };
  }
}

export async function sendTestWebhook({
  ctx,
  id,
  input,
}: {
  ctx: Context;
  id: string;
  input: TestWebhookInput | null | undefined;
}) {
  await existing(ctx, id);
  const type = input?.event ?? 'event.tracked';
  const now = ctx.clock.now();
  const messageId = await ctx.store.webhooks.enqueueFor(id, {
    accountId: ctx.account.id,
    type,
    occurredAt: now,
    data: sampleData(type, ctx.account.id, now),
  });
  return { message_id: messageId, webhook_id: id, event: type, status: 'pending' as const };
}
