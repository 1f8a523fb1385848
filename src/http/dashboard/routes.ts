/** The signed-in dashboard's pages and forms, over the same domain verbs as the API. */
import type { FastifyReply } from 'fastify';
import { TrackwayError } from '../../domain/errors.ts';
import {
  CreateDestinationSchema,
  ReplayDestinationSchema,
  UpdateDestinationSchema,
} from '../../domain/forwarding/destination-schemas.ts';
import {
  createDestination,
  deleteDestination,
  getDestination,
  updateDestination,
} from '../../domain/forwarding/destinations.ts';
import {
  getEventWithForwarding,
  replayDestination,
  testDestination,
} from '../../domain/forwarding/event-forwarding.ts';
import { type ConfigField, configOfForm } from '../../domain/forwarding/platforms/platform.ts';
import { isPlatform } from '../../domain/forwarding/platforms/registry.ts';
import { createKey, revokeKey } from '../../domain/keys/keys.ts';
import { CreateKeySchema } from '../../domain/keys/schemas.ts';
import { createPixel, rotatePublishableKey, updatePixel } from '../../domain/pixels/pixels.ts';
import { CreatePixelSchema, UpdatePixelSchema } from '../../domain/pixels/schemas.ts';
import type { PlatformGateway } from '../../domain/ports/platform-gateway.ts';
import { compileValidator } from '../../domain/validation.ts';
import {
  createWebhook,
  deleteWebhook,
  retryDelivery,
  rotateWebhookSecret,
  sendTestWebhook,
  updateWebhook,
  type WebhookContext,
} from '../../domain/webhooks/endpoints.ts';
import {
  CreateWebhookSchema,
  TestWebhookSchema,
  UpdateWebhookSchema,
} from '../../domain/webhooks/schemas.ts';
import { type Form, input, one, type Screen, type Screens } from './kit.ts';
import type { Flash } from './layout.ts';
import {
  CONFIG_FIELDS,
  destinationEditBody,
  destinationsBody,
  secretFields,
  type TestOutcome,
} from './pages/destinations.ts';
import { diagnosticsBody } from './pages/diagnostics.ts';
import { eventBody, eventsBody } from './pages/events.ts';
import { keysBody } from './pages/keys.ts';
import { overviewBody, type Usage } from './pages/overview.ts';
import { pixelEditBody, pixelsBody } from './pages/pixels.ts';
import { tailBody } from './pages/tail.ts';
import { webhookBody, webhooksBody } from './pages/webhooks.ts';

type PixelParams = { pixel_id: string };
type WebhookParams = { webhook_id: string };
type DestinationParams = { pixel_id: string; destination_id: string };

const validCreatePixel = compileValidator(CreatePixelSchema);
const validUpdatePixel = compileValidator(UpdatePixelSchema);
const validCreateKey = compileValidator(CreateKeySchema);
const validCreateWebhook = compileValidator(CreateWebhookSchema);
const validUpdateWebhook = compileValidator(UpdateWebhookSchema);
const validTestWebhook = compileValidator(TestWebhookSchema);
const validCreateDestination = compileValidator(CreateDestinationSchema);
const validUpdateDestination = compileValidator(UpdateDestinationSchema);
const validReplayDestination = compileValidator(ReplayDestinationSchema);

const PIXEL_FIELDS = ['name', 'domain', 'tracking_domain'];

export function registerScreens(
  screens: Screens,
  usageOf: (reply: FastifyReply) => Usage | null,
  platforms: () => PlatformGateway,
): void {
  screens.page('/dashboard', async (request, ctx, _flash, reply) => {
    const screen = { section: '/dashboard', title: 'Overview' } as const;
    try {
      return { ...screen, body: await overviewBody(ctx, request.query, usageOf(reply)) };
    } catch (error) {
      if (!isInvalid(error)) throw error;
      const { pixel_id } = request.query;
      return {
        ...screen,
        body: await overviewBody(ctx, pixel_id ? { pixel_id } : {}, usageOf(reply)),
        flash: { error: error.message },
        status: 400,
      };
    }
  });

  // Diagnostics: a bad period shows the page again for the last 7 days, and the reason.
  screens.page('/dashboard/diagnostics', async (request, ctx) => {
    const screen = { section: '/dashboard/diagnostics', title: 'Diagnostics' } as const;
    try {
      return { ...screen, body: (await diagnosticsBody(ctx, request.query)).body };
    } catch (error) {
      if (!isInvalid(error)) throw error;
      const { pixel_id } = request.query;
      return {
        ...screen,
        body: (await diagnosticsBody(ctx, pixel_id ? { pixel_id } : {})).body,
        flash: { error: error.message },
        status: 400,
      };
    }
  });

  // Pixels
  const pixels = async (
    ctx: WebhookContext,
    flash: Flash,
    form: Record<string, string> = {},
    offset?: string,
  ) =>
    ({
      section: '/dashboard/pixels',
      title: 'Pixels',
      body: await pixelsBody(ctx, form, offset),
      flash,
    }) satisfies Screen;
  const pixel = async (ctx: WebhookContext, pixelId: string, flash: Flash = {}) =>
    ({
      section: '/dashboard/pixels',
      title: 'Edit pixel',
      body: await pixelEditBody(ctx, pixelId),
      flash,
    }) satisfies Screen;
  const pixelUrl = (id: string, done: string) =>
    `/dashboard/pixels/${encodeURIComponent(id)}?done=${done}`;
  screens.page('/dashboard/pixels', (request, ctx, flash) =>
    pixels(ctx, flash, {}, request.query['offset']),
  );
  screens.form(
    '/dashboard/pixels',
    async (request, ctx) => {
      await createPixel({ ctx, input: input(validCreatePixel, request.body, PIXEL_FIELDS) });
      return '/dashboard/pixels?done=pixel-created';
    },
    // The form again as it was filled in, so a typo costs one field, not three.
    (request, ctx) =>
      pixels(ctx, {}, Object.fromEntries(PIXEL_FIELDS.map((f) => [f, one(request.body, f) ?? '']))),
  );
  screens.page<PixelParams>('/dashboard/pixels/:pixel_id', (request, ctx, flash) =>
    pixel(ctx, request.params.pixel_id, flash),
  );
  screens.form<PixelParams>(
    '/dashboard/pixels/:pixel_id',
    async (request, ctx) => {
      const body = input(validUpdatePixel, request.body, [...PIXEL_FIELDS, 'status']);
      await updatePixel({ ctx, pixelId: request.params.pixel_id, input: body });
      return pixelUrl(request.params.pixel_id, 'pixel-saved');
    },
    (request, ctx) => pixel(ctx, request.params.pixel_id),
  );
  screens.form<PixelParams>(
    '/dashboard/pixels/:pixel_id/publishable-key',
    async (request, ctx) => {
      await rotatePublishableKey({ ctx, pixelId: request.params.pixel_id });
      return pixelUrl(request.params.pixel_id, 'publishable-key-rotated');
    },
    (request, ctx) => pixel(ctx, request.params.pixel_id),
  );
  screens.form<PixelParams>(
    '/dashboard/pixels/:pixel_id/status',
    async (request, ctx) => {
      const body = input(validUpdatePixel, request.body, ['status']);
      await updatePixel({ ctx, pixelId: request.params.pixel_id, input: body });
      return `/dashboard/pixels?done=pixel-${body.status === 'paused' ? 'paused' : 'active'}`;
    },
    (_request, ctx) => pixels(ctx, {}),
  );

  // Events: a bad filter shows the explorer again without it, and the reason.
  screens.page('/dashboard/events', async (request, ctx) => {
    const screen = { section: '/dashboard/events', title: 'Events' } as const;
    try {
      return { ...screen, body: await eventsBody(ctx, request.query) };
    } catch (error) {
      if (!isInvalid(error)) throw error;
      const { pixel_id } = request.query;
      return {
        ...screen,
        body: await eventsBody(ctx, pixel_id ? { pixel_id } : {}),
        flash: { error: error.message },
        status: 400,
      };
    }
  });

  screens.page('/dashboard/tail', async (request, ctx) => ({
    section: '/dashboard/tail',
    title: 'Live tail',
    body: await tailBody(ctx, request.query),
  }));

  screens.page<{ pixel_id: string; event_id: string }>(
    '/dashboard/events/:pixel_id/:event_id',
    async (request, ctx, flash) => ({
      section: '/dashboard/events',
      title: 'Event record',
      body: await eventBody(ctx, request.params.pixel_id, request.params.event_id),
      flash,
    }),
  );

  // One event sent again to one destination: a replay of that event's instant, for its
  // failed or skipped job (the API's replay, so the same checks and the same worker).
  screens.form<{ pixel_id: string; event_id: string; destination_id: string }>(
    '/dashboard/events/:pixel_id/:event_id/replay/:destination_id',
    async (request, ctx) => {
      const { pixel_id: pixelId, event_id: eventId, destination_id: id } = request.params;
      const event = await getEventWithForwarding({ ctx, pixelId, eventId });
      const job = event.forwarding.find((f) => f.destination_id === id);
      if (!job || (job.status !== 'failed' && job.status !== 'skipped')) {
        throw new TrackwayError('conflict', 'Only a failed or skipped event can be sent again.');
      }
      await replayDestination({
        ctx,
        pixelId,
        id,
        input: { start_date: event.timestamp, end_date: event.timestamp, statuses: [job.status] },
      });
      return `/dashboard/events/${encodeURIComponent(pixelId)}/${encodeURIComponent(eventId)}?done=event-replayed`;
    },
    async (request, ctx) => ({
      section: '/dashboard/events',
      title: 'Event record',
      body: await eventBody(ctx, request.params.pixel_id, request.params.event_id),
    }),
  );

  // Destinations: the same verbs as the API; a test send's answer is shown on the page.
  const destinations = async (
    ctx: WebhookContext,
    pixelId: string | undefined,
    flash: Flash,
    tested?: TestOutcome,
  ) =>
    ({
      section: '/dashboard/destinations',
      title: 'Destinations',
      body: await destinationsBody(ctx, pixelId, tested),
      flash,
    }) satisfies Screen;
  const destinationsUrl = (pixelId: string, done: string) =>
    `/dashboard/destinations?pixel_id=${encodeURIComponent(pixelId)}&done=${done}`;
  screens.page('/dashboard/destinations', (request, ctx, flash) =>
    destinations(ctx, request.query['pixel_id'], flash),
  );
  // The pixel is in the path: the form's `pixel_id` is the Meta pixel's (the config field).
  screens.form<PixelParams>(
    '/dashboard/pixels/:pixel_id/destinations',
    async (request, ctx) => {
      const pixelId = request.params.pixel_id;
      const type = one(request.body, 'type') ?? '';
      const fields = isPlatform(type) ? CONFIG_FIELDS[type] : [];
      const config = formConfig(
        fields,
        input(
          (v) => v as Record<string, string>,
          request.body,
          fields.map((f) => f.name),
        ),
      );
      // Every type's config takes require_consent (contract §16): a checkbox on every form.
      if (one(request.body, 'require_consent') === 'true') config['require_consent'] = true;
      const name = one(request.body, 'name')?.trim();
      const body = validCreateDestination({ type, config, ...(name && { name }) });
      await createDestination({ ctx, pixelId, input: body });
      return destinationsUrl(pixelId, 'destination-created');
    },
    (request, ctx) => destinations(ctx, request.params.pixel_id, {}),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id/enabled',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      const body = validUpdateDestination({ enabled: one(request.body, 'enabled') === 'true' });
      await updateDestination({ ctx, pixelId, id, input: body });
      return destinationsUrl(pixelId, 'destination-saved');
    },
    (request, ctx) => destinations(ctx, request.params.pixel_id, {}),
  );
  // One destination's page: settings, credentials, delete. Same verbs and schema as PATCH and
  // DELETE /v1/pixels/:pixel_id/destinations/:destination_id.
  const destination = async (ctx: WebhookContext, params: DestinationParams, flash: Flash = {}) =>
    ({
      section: '/dashboard/destinations',
      title: 'Edit destination',
      body: await destinationEditBody(ctx, params.pixel_id, params.destination_id),
      flash,
    }) satisfies Screen;
  const destinationUrl = (p: DestinationParams, done: string) =>
    `/dashboard/pixels/${encodeURIComponent(p.pixel_id)}/destinations/${encodeURIComponent(p.destination_id)}?done=${done}`;
  screens.page<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id',
    (request, ctx, flash) => destination(ctx, request.params, flash),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      const name = one(request.body, 'name')?.trim();
      const enabled = one(request.body, 'enabled');
      const events = eventNames(one(request.body, 'events'));
      const body = validUpdateDestination({
        // The API cannot clear a name (it may only be replaced): an empty field keeps it.
        ...(name && { name }),
        ...(enabled !== undefined && { enabled: enabled === 'true' }),
        ...(events !== undefined && { events }),
      });
      await updateDestination({ ctx, pixelId, id, input: body });
      return destinationUrl(request.params, 'destination-saved');
    },
    (request, ctx) => destination(ctx, request.params),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id/credentials',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      const current = await getDestinationType(ctx, pixelId, id);
      const given: Record<string, string> = {};
      for (const field of secretFields(current)) {
        const value = one(request.body, field.name)?.trim();
        // An optional secret (one of two credentials: Google's OAuth or service account) may
        // be left empty; a required one may not.
        if (!value && field.optional) continue;
        if (!value) {
          throw new TrackwayError(
            'invalid_request',
            `Invalid field: config.${field.name} is required to replace the credentials`,
            `config.${field.name}`,
          );
        }
        given[field.name] = value;
      }
      const config = formConfig(secretFields(current), given);
      await updateDestination({ ctx, pixelId, id, input: validUpdateDestination({ config }) });
      // Redirected: the new secret is never rendered back, not even masked on this response.
      return destinationUrl(request.params, 'credentials-saved');
    },
    (request, ctx) => destination(ctx, request.params),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id/resume',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      await updateDestination({
        ctx,
        pixelId,
        id,
        input: validUpdateDestination({ enabled: true }),
      });
      return destinationsUrl(pixelId, 'destination-resumed');
    },
    (request, ctx) => destinations(ctx, request.params.pixel_id, {}),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id/delete',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      // The confirmation is checked here too: the checkbox's `required` is only the browser's.
      if (one(request.body, 'confirm') !== 'yes') {
        throw new TrackwayError(
          'invalid_request',
          'Tick the confirmation box to delete the destination.',
          'confirm',
        );
      }
      await deleteDestination({ ctx, pixelId, id });
      return destinationsUrl(pixelId, 'destination-deleted');
    },
    (request, ctx) => destination(ctx, request.params),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id/test',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      const result = await testDestination({
        ctx,
        platforms: platforms(),
        pixelId,
        id,
        input: undefined,
      });
      // The platform's answer is for this response only: rendered, not redirected.
      return destinations(ctx, pixelId, {}, { destinationId: id, ...result });
    },
    (request, ctx) => destinations(ctx, request.params.pixel_id, {}),
  );
  screens.form<DestinationParams>(
    '/dashboard/pixels/:pixel_id/destinations/:destination_id/replay',
    async (request, ctx) => {
      const { pixel_id: pixelId, destination_id: id } = request.params;
      const statuses = list(request.body, 'statuses');
      const body = validReplayDestination({
        start_date: one(request.body, 'start_date')?.trim() ?? '',
        end_date: one(request.body, 'end_date')?.trim() ?? '',
        ...(statuses.length > 0 && { statuses }),
      });
      const { queued } = await replayDestination({ ctx, pixelId, id, input: body });
      const notice = `Replay: ${queued} event${queued === 1 ? '' : 's'} queued.`;
      return destinations(ctx, pixelId, { notice });
    },
    (request, ctx) => destinations(ctx, request.params.pixel_id, {}),
  );

  // Webhooks
  const webhooks = async (ctx: WebhookContext, flash: Flash, created?: { secret: string }) =>
    ({
      section: '/dashboard/webhooks',
      title: 'Webhooks',
      body: await webhooksBody(ctx, created),
      flash,
    }) satisfies Screen;
  const webhook = async (
    ctx: WebhookContext,
    id: string,
    flash: Flash = {},
    rotated?: { secret: string },
  ) =>
    ({
      section: '/dashboard/webhooks',
      title: 'Webhook endpoint',
      body: await webhookBody(ctx, id, rotated),
      flash,
    }) satisfies Screen;
  const hookUrl = (id: string, done: string) =>
    `/dashboard/webhooks/${encodeURIComponent(id)}?done=${done}`;
  screens.page('/dashboard/webhooks', (_request, ctx, flash) => webhooks(ctx, flash));
  screens.form(
    '/dashboard/webhooks',
    async (request, ctx) => {
      const description = one(request.body, 'description')?.trim();
      const body = validCreateWebhook({
        url: one(request.body, 'url')?.trim() ?? '',
        events: list(request.body, 'events'),
        ...(description && { description }),
      });
      const created = await createWebhook({ ctx, input: body });
      // The secret is shown in this response only: no redirect, nothing stored for later.
      return webhooks(ctx, { notice: 'Endpoint created.' }, created);
    },
    (_request, ctx) => webhooks(ctx, {}),
  );
  screens.page<WebhookParams>('/dashboard/webhooks/:webhook_id', (request, ctx, flash) =>
    webhook(ctx, request.params.webhook_id, flash),
  );
  screens.form<WebhookParams>(
    '/dashboard/webhooks/:webhook_id/test',
    async (request, ctx) => {
      const body = input(validTestWebhook, request.body, ['event']);
      await sendTestWebhook({ ctx, id: request.params.webhook_id, input: body });
      return hookUrl(request.params.webhook_id, 'test-sent');
    },
    (request, ctx) => webhook(ctx, request.params.webhook_id),
  );
  screens.form<WebhookParams>(
    '/dashboard/webhooks/:webhook_id/rotate-secret',
    async (request, ctx) => {
      const rotated = await rotateWebhookSecret({ ctx, id: request.params.webhook_id });
      const notice = 'New secret made; the old one keeps signing for 24 hours.';
      return webhook(ctx, request.params.webhook_id, { notice }, rotated);
    },
    (request, ctx) => webhook(ctx, request.params.webhook_id),
  );
  screens.form<WebhookParams>(
    '/dashboard/webhooks/:webhook_id/enabled',
    async (request, ctx) => {
      const body = validUpdateWebhook({ enabled: one(request.body, 'enabled') === 'true' });
      await updateWebhook({ ctx, id: request.params.webhook_id, input: body });
      return hookUrl(request.params.webhook_id, 'webhook-saved');
    },
    (request, ctx) => webhook(ctx, request.params.webhook_id),
  );
  screens.form<WebhookParams>(
    '/dashboard/webhooks/:webhook_id/delete',
    async (request, ctx) => {
      await deleteWebhook({ ctx, id: request.params.webhook_id });
      return '/dashboard/webhooks?done=webhook-deleted';
    },
    (_request, ctx) => webhooks(ctx, {}),
  );
  screens.form<WebhookParams & { message_id: string }>(
    '/dashboard/webhooks/:webhook_id/deliveries/:message_id/retry',
    async (request, ctx) => {
      const { webhook_id: id, message_id: messageId } = request.params;
      await retryDelivery({ ctx, id, messageId });
      return hookUrl(id, 'retried');
    },
    async (request, ctx) => ({ ...(await webhook(ctx, request.params.webhook_id)), status: 409 }),
  );

  // Any other dashboard URL: 404, inside the layout (kit.ts).
  screens.page('/dashboard/*', async (request) => {
    throw new TrackwayError(
      'not_found',
      `There is no dashboard page at ${request.url.split('?')[0]}.`,
    );
  });

  // API keys
  const keys = async (
    request: { dashboardKeyId: string | null },
    ctx: WebhookContext,
    flash: Flash,
    created?: { name: string; key: string },
  ) =>
    ({
      section: '/dashboard/keys',
      title: 'API keys',
      body: await keysBody(ctx, request.dashboardKeyId ?? '', created),
      flash,
    }) satisfies Screen;
  screens.page('/dashboard/keys', (request, ctx, flash) => keys(request, ctx, flash));
  screens.form(
    '/dashboard/keys',
    async (request, ctx) => {
      const body = input(validCreateKey, request.body, ['name', 'scope']);
      const created = await createKey({ ctx, input: body });
      // Shown in this response only: no redirect, nothing stored for later.
      return { ...(await keys(request, ctx, { notice: 'Key created.' }, created)), status: 201 };
    },
    (request, ctx) => keys(request, ctx, {}),
  );
  screens.form<{ key_id: string }>(
    '/dashboard/keys/:key_id/revoke',
    async (request, ctx) => {
      await revokeKey({ ctx, keyId: request.params.key_id });
      // Revoking the session's own key ends the session (findSession joins the key).
      return '/dashboard/keys?done=key-revoked';
    },
    (request, ctx) => keys(request, ctx, {}),
  );
}

/**
 * The events filter as typed: names separated by commas or lines, blanks and repeats dropped;
 * an empty field is `null` (every event), a missing one leaves the filter as it is.
 */
function eventNames(text: string | undefined): string[] | null | undefined {
  if (text === undefined) return undefined;
  const names = [...new Set(text.split(/[,\n]/).map((n) => n.trim()))].filter((n) => n !== '');
  return names.length === 0 ? null : names;
}

/** The destination's type (its secret fields), or its 404 for another account's. */
async function getDestinationType(ctx: WebhookContext, pixelId: string, id: string) {
  return (await getDestination({ ctx, pixelId, id })).type;
}

/** A checkbox group's values: none, one or many. */
function list(form: Form, key: string): string[] {
  const value = form[key];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

const isInvalid = (error: unknown): error is TrackwayError =>
  error instanceof TrackwayError && error.code === 'invalid_request';

/** A destination form's fields as its config (nested and JSON fields: `configOfForm`). */
function formConfig(fields: readonly ConfigField[], values: Record<string, string>) {
  const made = configOfForm(fields, values);
  if ('problem' in made) {
    const { field, message } = made.problem;
    throw new TrackwayError(
      'invalid_request',
      `Invalid field: config.${field} ${message}`,
      `config.${field}`,
    );
  }
  return made.config;
}
