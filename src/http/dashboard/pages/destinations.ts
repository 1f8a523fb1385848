/**
 * Destinations of a pixel (contract §12, §13): their state and last error, a form per platform
 * to add one, and per destination enable/disable, a test send (the platform's answer shown
 * here) and a replay of a date range.
 */
import type { Context } from '../../../domain/context.ts';
import { listDestinations } from '../../../domain/forwarding/destinations.ts';
import { formatTime, type Html, html } from '../html.ts';
import { allPixels, chosenPixel, noPixels, pixelPicker } from './common.ts';

/** What a test send answered, shown once on the page that asked for it. */
export interface TestOutcome {
  destinationId: string;
  ok: boolean;
  status_code: number | null;
  platform_response: unknown;
}

interface ConfigField {
  name: string;
  label: string;
  secret?: boolean;
  optional?: boolean;
  placeholder: string;
}

/** The config fields per type, as destination-config.ts declares them. */
export const CONFIG_FIELDS: Record<'meta' | 'ga4' | 'tiktok', ConfigField[]> = {
  meta: [
    { name: 'pixel_id', label: 'Meta pixel ID', placeholder: '123456789012345' },
    { name: 'access_token', label: 'Access token', secret: true, placeholder: 'EAAB…' },
    { name: 'test_event_code', label: 'Test event code', optional: true, placeholder: 'TEST12345' },
  ],
  ga4: [
    { name: 'measurement_id', label: 'Measurement ID', placeholder: 'G-XXXXXXXXXX' },
    { name: 'api_secret', label: 'API secret', secret: true, placeholder: '' },
  ],
  tiktok: [
    { name: 'pixel_code', label: 'Pixel code', placeholder: 'C4ABCDEFGHIJ' },
    { name: 'access_token', label: 'Access token', secret: true, placeholder: '' },
    { name: 'test_event_code', label: 'Test event code', optional: true, placeholder: 'TEST12345' },
  ],
};

const TYPE_LABELS = { meta: 'Meta (Conversions API)', ga4: 'Google Analytics 4', tiktok: 'TikTok' };

function createForm(pixelId: string, type: keyof typeof CONFIG_FIELDS): Html {
  const id = (field: string) => `${type}-${field}`;
  return html`<form method="post" action="/dashboard/pixels/${pixelId}/destinations" class="stack" aria-labelledby="new-${type}-h">
  <h3 id="new-${type}-h">${TYPE_LABELS[type]}</h3>
  <input type="hidden" name="type" value="${type}">
  <div class="field"><label for="${id('name')}">Name <span class="hint">(optional)</span></label><input id="${id('name')}" name="name" maxlength="200"></div>
  ${CONFIG_FIELDS[type].map(
    (f) =>
      html`<div class="field"><label for="${id(f.name)}">${f.label}${f.optional ? html` <span class="hint">(optional)</span>` : ''}</label><input id="${id(f.name)}" name="${f.name}" type="${f.secret ? 'password' : 'text'}" autocomplete="off"${f.optional ? '' : html` required`}${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}></div>`,
  )}
  <button type="submit">Add ${TYPE_LABELS[type]} destination</button>
</form>`;
}

function answerBox(outcome: TestOutcome): Html {
  const body =
    typeof outcome.platform_response === 'string'
      ? outcome.platform_response
      : JSON.stringify(outcome.platform_response, null, 2);
  return html`<section class="test-answer" aria-labelledby="answer-h">
<h2 id="answer-h">Test send: ${outcome.ok ? 'accepted' : 'refused'}</h2>
<dl class="facts">
  <dt>Destination</dt><dd><code>${outcome.destinationId}</code></dd>
  <dt>Status code</dt><dd class="status-code">${outcome.status_code === null ? 'no answer' : String(outcome.status_code)}</dd>
</dl>
<pre class="platform-response">${body}</pre>
</section>`;
}

export async function destinationsBody(
  ctx: Context,
  askedPixel: string | undefined,
  tested?: TestOutcome,
): Promise<Html> {
  const pixels = await allPixels(ctx);
  const pixel = chosenPixel(pixels, askedPixel);
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
    <td>${label}<br><code class="hint">${d.id}</code></td>
    <td>${d.type}</td>
    <td>${Object.entries(d.config).map(([k, v]) => html`<code>${k}</code>: ${typeof v === 'string' ? v : JSON.stringify(v)}<br>`)}</td>
    <td><span class="status ${d.state}">${d.state}</span>${d.enabled ? '' : html` <span class="status paused">disabled</span>`}</td>
    <td>${d.last_error ?? '—'}</td>
    <td>${formatTime(d.created_at)}</td>
    <td class="actions">
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
${createForm(pixel.id, 'meta')}
${createForm(pixel.id, 'ga4')}
${createForm(pixel.id, 'tiktok')}
</section>`;
}
