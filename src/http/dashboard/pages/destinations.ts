/**
 * Destinations of a pixel (contract §12, §13): their state and last error, a form per platform
 * to add one, and per destination enable/disable, resume, a test send (the platform's answer
 * shown here) and a replay of a date range; one destination's own page edits it, replaces its
 * credentials and deletes it.
 */
import type { Context } from '../../../domain/context.ts';
import { getDestination, listDestinations } from '../../../domain/forwarding/destinations.ts';
import type { ConfigField } from '../../../domain/forwarding/platforms/platform.ts';
import {
  isPlatform,
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
} from '../../../domain/forwarding/platforms/registry.ts';
import { formatTime, type Html, html } from '../html.ts';
import { noPixels, pickPixel, pixelPicker } from './common.ts';

/** What a test send answered, shown once on the page that asked for it. */
export interface TestOutcome {
  destinationId: string;
  ok: boolean;
  status_code: number | null;
  platform_response: unknown;
}

/** The visible warning of a destination that has a test event code set, or nothing. */
function testModeWarning(config: Record<string, unknown>): Html | '' {
  const code = config['test_event_code'];
  if (typeof code !== 'string' || code === '') return '';
  return html`<p class="warning" role="note"><strong>Test mode</strong> (test event code <code>${code}</code>): every event goes to the platform’s Test events only and none counts as a live conversion. To go live, delete this destination and add it again without a test event code.</p>`;
}

/** The config fields per type, as each platform's module declares them. */
export const CONFIG_FIELDS: Record<Platform, readonly ConfigField[]> = Object.fromEntries(
  PLATFORMS.map((type) => [type, PLATFORM_MODULES[type].config.form]),
) as Record<Platform, readonly ConfigField[]>;

/** The write-only fields of a type: what "replace credentials" asks for. */
export function secretFields(type: string): ConfigField[] {
  return (isPlatform(type) ? CONFIG_FIELDS[type] : []).filter((f) => f.secret);
}

function createForm(pixelId: string, type: Platform): Html {
  const label = PLATFORM_MODULES[type].label;
  const id = (field: string) => `${type}-${field}`;
  return html`<form method="post" action="/dashboard/pixels/${pixelId}/destinations" class="stack" aria-labelledby="new-${type}-h">
  <h3 id="new-${type}-h">${label}</h3>
  <input type="hidden" name="type" value="${type}">
  <div class="field"><label for="${id('name')}">Name <span class="hint">(optional)</span></label><input id="${id('name')}" name="name" maxlength="200"></div>
  ${CONFIG_FIELDS[type].map(
    (f) =>
      html`<div class="field"><label for="${id(f.name)}">${f.label}${f.optional ? html` <span class="hint">(optional)</span>` : ''}</label><input id="${id(f.name)}" name="${f.name}" type="${f.secret ? 'password' : 'text'}" autocomplete="off"${f.optional ? '' : html` required`}${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}${f.warning ? html` aria-describedby="${id(f.name)}-warning"` : ''}>${f.warning ? html`<p class="warning field-warning" id="${id(f.name)}-warning">${f.warning}</p>` : ''}</div>`,
  )}
  <div class="field"><label><input type="checkbox" name="require_consent" value="true"> Only events with consent to ad user data (<code>consent.ad_user_data: "granted"</code>)</label></div>
  <button type="submit">Add ${label} destination</button>
</form>`;
}

function answerBox(outcome: TestOutcome): Html {
  // A platform without a test mode (Microsoft) is sent nothing: the request was only checked.
  const unsent = outcome.status_code === null && outcome.platform_response === null;
  const body = unsent
    ? 'This platform has no test mode: the request was built and checked, and not sent (a live conversion is never sent as a test).'
    : typeof outcome.platform_response === 'string'
      ? outcome.platform_response
      : JSON.stringify(outcome.platform_response, null, 2);
  const verdict = unsent ? 'checked, not sent' : outcome.ok ? 'accepted' : 'refused';
  return html`<section class="test-answer" aria-labelledby="answer-h">
<h2 id="answer-h">Test send: ${verdict}</h2>
<dl class="facts">
  <dt>Destination</dt><dd><code>${outcome.destinationId}</code></dd>
  <dt>Status code</dt><dd class="status-code">${outcome.status_code === null ? 'no answer' : String(outcome.status_code)}</dd>
</dl>
<pre class="platform-response">${body}</pre>
</section>`;
}

/** "Access token" → "access token", but "API secret" stays. */
const lowerFirst = (label: string) =>
  /^[A-Z][a-z]/.test(label) ? label[0]!.toLowerCase() + label.slice(1) : label;

/** Resuming keeps the credentials: for when the refusal was fixed on the platform's side. */
function resumeForm(base: string, id: string, label: string): Html {
  return html`<form method="post" action="${base}/${id}/resume"><button type="submit" aria-label="Resume ${label}">Resume</button></form>`;
}

export async function destinationsBody(
  ctx: Context,
  askedPixel: string | undefined,
  tested?: TestOutcome,
): Promise<Html> {
  const { pixels, pixel } = await pickPixel(ctx, askedPixel);
  if (!pixel) return noPixels;
  const { destinations } = await listDestinations({ ctx, pixelId: pixel.id });
  const today = ctx.clock.now().toISOString().slice(0, 10);
  const base = `/dashboard/pixels/${pixel.id}/destinations`;
  return html`${pixelPicker('/dashboard/destinations', pixels, pixel)}
${tested ? answerBox(tested) : ''}
<section aria-labelledby="dests-h">
<h2 id="dests-h">Destinations</h2>
${
  destinations.length === 0
    ? html`<p>No destinations yet: events of this pixel are stored, not forwarded.</p>`
    : html`<table class="destinations">
  <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Config</th><th scope="col">State</th><th scope="col">Last error</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${destinations.map((d) => {
    const label = d.name ?? d.id;
    return html`<tr>
    <td><a href="${base}/${d.id}" aria-label="Edit ${label}">${label}</a><br><code class="hint">${d.id}</code></td>
    <td>${d.type}</td>
    <td>${Object.entries(d.config).map(([k, v]) => html`<code>${k}</code>: ${typeof v === 'string' ? v : JSON.stringify(v)}<br>`)}${testModeWarning(d.config)}</td>
    <td><span class="status ${d.state}">${d.state}</span>${d.enabled ? '' : html` <span class="status paused">disabled</span>`}${d.events ? html`<br><span class="hint">only ${d.events.join(', ')}</span>` : ''}</td>
    <td>${d.last_error ?? '—'}</td>
    <td>${formatTime(d.created_at)}</td>
    <td class="actions">
      ${d.state === 'suspended' ? resumeForm(base, d.id, label) : ''}
      <form method="post" action="${base}/${d.id}/enabled"><input type="hidden" name="enabled" value="${d.enabled ? 'false' : 'true'}"><button type="submit" aria-label="${d.enabled ? 'Disable' : 'Enable'} ${label}">${d.enabled ? 'Disable' : 'Enable'}</button></form>
      <form method="post" action="${base}/${d.id}/test"><button type="submit" aria-label="Send test to ${label}">Send test</button></form>
      <details><summary>Replay<span class="visually-hidden"> to ${label}</span></summary>
      <form method="post" action="${base}/${d.id}/replay" class="stack">
        <div class="field"><label for="start-${d.id}">From</label><input id="start-${d.id}" name="start_date" type="date" required value="${today}"></div>
        <div class="field"><label for="end-${d.id}">To</label><input id="end-${d.id}" name="end_date" type="date" required value="${today}"></div>
        <fieldset><legend>Outcomes to send again</legend>
          <label><input type="checkbox" name="statuses" value="failed" checked> failed</label>
          <label><input type="checkbox" name="statuses" value="skipped" checked> skipped</label>
        </fieldset>
        <button type="submit">Replay</button>
      </form></details>
    </td>
  </tr>`;
  })}
  </tbody>
</table>`
}
</section>
<section aria-labelledby="new-dest-h">
<h2 id="new-dest-h">Add a destination</h2>
<p class="hint">Secrets are write-only: after saving, only their last 4 characters are shown.</p>
${PLATFORMS.map((type) => createForm(pixel.id, type))}
</section>`;
}

/**
 * One destination: its settings (name, event filter, enabled), its credentials replaced
 * (write-only: the field is always empty, the stored value shown masked), resuming it when the
 * platform suspended it, and deleting it behind a confirmation.
 */
export async function destinationEditBody(
  ctx: Context,
  pixelId: string,
  id: string,
): Promise<Html> {
  const d = await getDestination({ ctx, pixelId, id });
  const base = `/dashboard/pixels/${pixelId}/destinations`;
  const label = d.name ?? d.id;
  const secrets = secretFields(d.type);
  return html`<p><a href="/dashboard/destinations?pixel_id=${encodeURIComponent(pixelId)}">← All destinations of this pixel</a></p>
<dl class="facts">
  <dt>Destination</dt><dd>${label} <code>${d.id}</code></dd>
  <dt>Type</dt><dd>${isPlatform(d.type) ? PLATFORM_MODULES[d.type].label : d.type}</dd>
  <dt>State</dt><dd><span class="status ${d.state}">${d.state}</span>${d.enabled ? '' : html` <span class="status paused">disabled</span>`}</dd>
  ${d.last_error ? html`<dt>Last error</dt><dd class="last-error">${d.last_error}</dd>` : ''}
  <dt>Config</dt><dd>${Object.entries(d.config).map(([k, v]) => html`<code>${k}</code>: ${typeof v === 'string' ? v : JSON.stringify(v)}<br>`)}</dd>
  <dt>Updated</dt><dd>${formatTime(d.updated_at)}</dd>
</dl>
${testModeWarning(d.config)}
${
  d.state === 'suspended'
    ? html`<section aria-labelledby="suspended-h" class="secret">
<h2 id="suspended-h">Suspended</h2>
<p>The platform refused this destination's credentials, so nothing is sent; its events wait.
Replace the credentials below, or resume it if the refusal was fixed on the platform's side:
the waiting events are then sent.</p>
${resumeForm(base, d.id, label)}
</section>`
    : ''
}
<section aria-labelledby="settings-h">
<h2 id="settings-h">Settings</h2>
<form method="post" action="${base}/${d.id}" class="stack">
  <div class="field"><label for="dest-name">Name</label><input id="dest-name" name="name" maxlength="200" value="${d.name ?? ''}"></div>
  <div class="field"><label for="dest-events">Events to forward <span class="hint">(comma-separated names; empty: every event)</span></label><input id="dest-events" name="events" value="${d.events?.join(', ') ?? ''}" placeholder="Purchase, Lead"></div>
  <div class="field"><label for="dest-enabled">Forwarding</label>
    <select id="dest-enabled" name="enabled">
      <option value="true"${d.enabled ? html` selected` : ''}>Enabled: new events are forwarded</option>
      <option value="false"${d.enabled ? '' : html` selected`}>Disabled: nothing is forwarded</option>
    </select></div>
  <button type="submit">Save destination</button>
</form>
</section>
<section aria-labelledby="credentials-h">
<h2 id="credentials-h">Replace credentials</h2>
<p class="hint">Write-only: the stored value is never shown again, only its last 4 characters. New credentials resume a suspended destination.</p>
<form method="post" action="${base}/${d.id}/credentials" class="stack">
  ${secrets.map(
    (f) =>
      html`<div class="field"><label for="new-${f.name}">New ${lowerFirst(f.label)} <span class="hint">(now ${String(d.config[f.name] ?? '—')})</span></label><input id="new-${f.name}" name="${f.name}" type="password" autocomplete="off" required></div>`,
  )}
  <button type="submit">Replace credentials</button>
</form>
</section>
<section aria-labelledby="delete-h">
<h2 id="delete-h">Delete</h2>
<form method="post" action="${base}/${d.id}/delete" class="stack">
  <label><input type="checkbox" name="confirm" value="yes" required> Yes, delete ${label}: events still waiting for it will not be sent</label>
  <button type="submit" class="danger">Delete destination</button>
</form>
</section>`;
}
