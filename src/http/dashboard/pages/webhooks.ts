import type { Context } from '../../../domain/context.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../domain/model.ts';
import { getWebhook, listDeliveries, listWebhooks } from '../../../domain/webhooks/endpoints.ts';
import { formatTime, type Html, html } from '../html.ts';
import { copyButton } from './common.ts';

function secretBox(title: string, secret: string): Html {
  return html`<section class="secret" aria-labelledby="secret-h">
<h2 id="secret-h">${title}</h2>
<p>Copy the signing secret now: it is shown only this once.</p>
<p><label for="secret">Signing secret</label> <input id="secret" class="reveal" readonly value="${secret}"> ${copyButton('secret', 'the signing secret')}</p>
</section>`;
}

export async function webhooksBody(ctx: Context, created?: { secret: string }): Promise<Html> {
  const { webhooks } = await listWebhooks({ ctx });
  return html`${created ? secretBox('Endpoint created', created.secret) : ''}
<section aria-labelledby="new-hook-h">
<h2 id="new-hook-h">Add an endpoint</h2>
<form method="post" action="/dashboard/webhooks" class="stack">
  <div class="field"><label for="url">URL</label><input id="url" name="url" type="url" required placeholder="https://example.com/webhooks"></div>
  <div class="field"><label for="description">Description <span class="hint">(optional)</span></label><input id="description" name="description" maxlength="500"></div>
  <fieldset><legend>Events</legend>
    ${WEBHOOK_EVENT_TYPES.map((t) => html`<label><input type="checkbox" name="events" value="${t}" checked> <code>${t}</code></label>`)}
  </fieldset>
  <button type="submit">Add endpoint</button>
</form>
</section>
<section aria-labelledby="hooks-h">
<h2 id="hooks-h">Endpoints</h2>
${
  webhooks.length === 0
    ? html`<p>No endpoints yet.</p>`
    : html`<table>
  <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
  <tbody>
  ${webhooks.map(
    (w) => html`<tr>
    <td><a href="/dashboard/webhooks/${w.id}">${w.url}</a>${w.description ? html`<br><span class="hint">${w.description}</span>` : ''}</td>
    <td>${w.events.join(', ')}</td>
    <td><span class="status ${w.enabled ? 'active' : 'paused'}">${w.enabled ? 'enabled' : 'disabled'}</span></td>
    <td>${formatTime(w.created_at)}</td>
  </tr>`,
  )}
  </tbody>
</table>`
}
</section>`;
}

export async function webhookBody(
  ctx: Context,
  id: string,
  rotated?: { secret: string },
): Promise<Html> {
  const w = await getWebhook({ ctx, id });
  const { deliveries, total } = await listDeliveries({ ctx, id, query: { limit: 100 } });
  return html`<p><a href="/dashboard/webhooks">← All endpoints</a></p>
${rotated ? secretBox('Secret rotated', rotated.secret) : ''}
<dl class="facts">
  <dt>Endpoint ID</dt><dd><code>${w.id}</code></dd>
  <dt>URL</dt><dd>${w.url}</dd>
  <dt>Events</dt><dd>${w.events.join(', ')}</dd>
  <dt>State</dt><dd><span class="status ${w.enabled ? 'active' : 'paused'}">${w.enabled ? 'enabled' : 'disabled'}</span></dd>
</dl>
<div class="toolbar">
  <form method="post" action="/dashboard/webhooks/${w.id}/test" class="inline">
    <label for="test-event">Test event</label>
    <select id="test-event" name="event">${WEBHOOK_EVENT_TYPES.map((t) => html`<option value="${t}">${t}</option>`)}</select>
    <button type="submit">Send test</button>
  </form>
  <form method="post" action="/dashboard/webhooks/${w.id}/rotate-secret"><button type="submit">Rotate secret</button></form>
  <form method="post" action="/dashboard/webhooks/${w.id}/enabled"><input type="hidden" name="enabled" value="${w.enabled ? 'false' : 'true'}"><button type="submit">${w.enabled ? 'Disable' : 'Enable'}</button></form>
  <form method="post" action="/dashboard/webhooks/${w.id}/delete"><button type="submit" class="danger">Delete endpoint</button></form>
</div>
<section aria-labelledby="deliveries-h">
<h2 id="deliveries-h">Delivery attempts <span class="hint">(${total}, newest first)</span></h2>
${
  deliveries.length === 0
    ? html`<p>No attempts yet.</p>`
    : html`<table class="deliveries">
  <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Message</th><th scope="col" class="num">Attempt</th><th scope="col">Status</th><th scope="col">Response</th><th scope="col" class="num">Duration</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${deliveries.map(
    (d) => html`<tr>
    <td>${formatTime(d.attempted_at)}</td>
    <td><code>${d.event}</code></td>
    <td><code>${d.message_id}</code></td>
    <td class="num">${d.attempt}</td>
    <td><span class="status ${d.status}">${d.status}</span></td>
    <td>${d.error ?? (d.response_status_code === null ? '—' : `HTTP ${d.response_status_code}`)}${
      d.response_body
        ? html`<details><summary>Body</summary><pre>${d.response_body}</pre></details>`
        : ''
    }</td>
    <td class="num">${d.duration_ms === null ? '—' : `${d.duration_ms} ms`}</td>
    <td class="actions">${
      d.status === 'failed'
        ? html`<form method="post" action="/dashboard/webhooks/${w.id}/deliveries/${d.message_id}/retry"><button type="submit" aria-label="Resend ${d.message_id}">Resend</button></form>`
        : ''
    }</td>
  </tr>`,
  )}
  </tbody>
</table>`
}
</section>`;
}
