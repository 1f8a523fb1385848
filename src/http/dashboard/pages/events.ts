/** The events explorer: the list API's filters, and each event's stored (hashed) record. */
import type { Context } from '../../../domain/context.ts';
import { listEvents } from '../../../domain/events/list-events.ts';
import { getEventWithForwarding } from '../../../domain/forwarding/event-forwarding.ts';
import { isPlatform, PLATFORM_MODULES } from '../../../domain/forwarding/platforms/registry.ts';
import { formatTime, type Html, html } from '../html.ts';
import { noPixels, pickPixel, pixelPicker } from './common.ts';

export interface EventFilters {
  pixel_id?: string;
  event_name?: string;
  start_date?: string;
  end_date?: string;
  offset?: string;
}

export async function eventsBody(ctx: Context, filters: EventFilters): Promise<Html> {
  const { pixels, pixel } = await pickPixel(ctx, filters.pixel_id);
  if (!pixel) return noPixels;
  const offset = Math.max(0, Number.parseInt(filters.offset ?? '0', 10) || 0);
  const given = (v: string | undefined) =>
    v === undefined || v.trim() === '' ? undefined : v.trim();
  const query = {
    limit: 50,
    offset,
    ...(given(filters.event_name) && { event_name: given(filters.event_name)! }),
    ...(given(filters.start_date) && { start_date: given(filters.start_date)! }),
    ...(given(filters.end_date) && { end_date: given(filters.end_date)! }),
  };
  const list = await listEvents({ ctx, pixelId: pixel.id, query });
  const extra = html`<div class="field"><label for="event_name">Event name</label><input id="event_name" name="event_name" value="${query.event_name ?? ''}" placeholder="Purchase"></div>
<div class="field"><label for="start_date">From</label><input id="start_date" name="start_date" type="date" value="${query.start_date ?? ''}"></div>
<div class="field"><label for="end_date">To</label><input id="end_date" name="end_date" type="date" value="${query.end_date ?? ''}"></div>`;
  const pageLink = (to: number) => {
    const params = new URLSearchParams({ pixel_id: pixel.id, offset: String(to) });
    for (const k of ['event_name', 'start_date', 'end_date'] as const) {
      if (query[k] !== undefined) params.set(k, query[k]!);
    }
    return `/dashboard/events?${params}`;
  };
  return html`${pixelPicker('/dashboard/events', pixels, pixel, extra)}
<p class="summary" role="status">${list.total.toLocaleString('en-US')} matching events${
    list.total > 0 ? html`, showing ${offset + 1}–${offset + list.events.length}` : ''
  }.</p>
${
  list.events.length === 0
    ? ''
    : html`<table class="events">
  <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Event ID</th><th scope="col">Source</th><th scope="col" class="num">Value</th><th scope="col">Record</th></tr></thead>
  <tbody>
  ${list.events.map(
    (e) => html`<tr>
    <td>${formatTime(e.timestamp)}</td>
    <td>${e.event_name}${e.dropped.length > 0 ? html` <span class="status dropped" title="Stored without ${e.dropped.join(', ')}: could not be used">${e.dropped.length} dropped</span>` : ''}</td>
    <td><code>${e.event_id}</code></td>
    <td>${e.source}</td>
    <td class="num">${e.value === null ? '—' : `${e.value} ${e.currency ?? ''}`}</td>
    <td><a href="/dashboard/events/${pixel.id}/${encodeURIComponent(e.event_id)}">Forwarding and match quality<span class="visually-hidden"> of ${e.event_id}</span></a> <details><summary>View record<span class="visually-hidden"> of ${e.event_id}</span></summary><pre class="record">${JSON.stringify(e, null, 2)}</pre></details></td>
  </tr>`,
  )}
  </tbody>
</table>`
}
<nav aria-label="Pages" class="pager">
  ${offset > 0 ? html`<a href="${pageLink(Math.max(0, offset - 50))}">← Newer</a>` : ''}
  ${offset + list.events.length < list.total ? html`<a href="${pageLink(offset + 50)}">Older →</a>` : ''}
</nav>`;
}

/**
 * One event as stored (hashed), its match quality and its forwarding ledger: per destination
 * the outcome, and every request that carried it with the platform's answer.
 */
export async function eventBody(ctx: Context, pixelId: string, eventId: string): Promise<Html> {
  const e = await getEventWithForwarding({ ctx, pixelId, eventId });
  // The ledger names each destination as its list does: its name, else its platform's label.
  const destinations = new Map(
    (await ctx.store.destinations.listDestinations(ctx.account.id, pixelId)).map((d) => [d.id, d]),
  );
  const labelOf = (platform: string) =>
    isPlatform(platform) ? PLATFORM_MODULES[platform].label : platform;
  const { forwarding, match_quality: mq, ...record } = e;
  const keys = (names: string[]) =>
    names.length === 0 ? '—' : names.map((k, i) => html`${i > 0 ? ', ' : ''}<code>${k}</code>`);
  return html`<p><a href="/dashboard/events?pixel_id=${encodeURIComponent(pixelId)}">← All events</a></p>
<dl class="facts">
  <dt>Event</dt><dd>${e.event_name}</dd>
  <dt>Event ID</dt><dd><code>${e.event_id}</code></dd>
  <dt>Time</dt><dd>${formatTime(e.timestamp)}</dd>
  <dt>Source</dt><dd>${e.source === 'browser' ? 'browser (the snippet)' : 'server'}</dd>
  ${
    e.dropped.length > 0
      ? html`<dt>Dropped</dt><dd class="dropped">${keys(e.dropped)} <span class="hint">(could not be used: stored without ${e.dropped.length === 1 ? 'it' : 'them'}; the track answer's <code>warnings</code> said why)</span></dd>`
      : ''
  }
</dl>
<section aria-labelledby="mq-h">
<h2 id="mq-h">Match quality</h2>
<dl class="facts match-quality">
  <dt>Score</dt><dd class="score">${mq.score.toFixed(1)} / 10</dd>
  <dt>Keys present</dt><dd>${keys(mq.keys)}</dd>
  <dt>Keys missing</dt><dd>${keys(mq.missing)}</dd>
  ${mq.enriched ? html`<dt>From the browser</dt><dd>${keys(mq.enriched)}</dd>` : ''}
</dl>
<p class="hint">A local estimate from the keys the event carries, not Meta's Event Match Quality.</p>
</section>
<section aria-labelledby="consent-h">
<h2 id="consent-h">Consent</h2>
${
  e.consent === null
    ? html`<p class="consent">None given: forwarded as the destinations' settings allow.</p>`
    : html`<dl class="facts consent">
  <dt>ad_user_data</dt><dd>${e.consent.ad_user_data ?? '—'}</dd>
  <dt>ad_personalization</dt><dd>${e.consent.ad_personalization ?? '—'}</dd>
  <dt>limited_data_use</dt><dd>${e.consent.limited_data_use === undefined ? '—' : String(e.consent.limited_data_use)}</dd>
</dl>`
}
</section>
<section aria-labelledby="fwd-h">
<h2 id="fwd-h">Forwarding</h2>
${
  forwarding.length === 0
    ? html`<p>Not forwarded: the pixel had no destination for it.</p>`
    : forwarding.map(
        (f) => html`<article class="forwarding" aria-label="Forwarding to ${f.destination_id}">
<dl class="facts">
  <dt>Destination</dt><dd>${destinations.get(f.destination_id)?.name ?? labelOf(f.platform)} <span class="hint">(${labelOf(f.platform)})</span> <a href="/dashboard/destinations?pixel_id=${encodeURIComponent(pixelId)}"><code>${f.destination_id}</code></a></dd>
  <dt>Status</dt><dd><span class="status ${f.status}">${f.status}</span></dd>
  <dt>Attempts</dt><dd>${f.attempts}</dd>
  ${f.reason ? html`<dt>Reason</dt><dd>${f.reason}</dd>` : ''}
  ${f.last_error ? html`<dt>Last error</dt><dd>${f.last_error}</dd>` : ''}
  ${f.forwarded_at ? html`<dt>Forwarded</dt><dd>${formatTime(f.forwarded_at)}</dd>` : ''}
</dl>
${
  f.attempt_log.length === 0
    ? ''
    : html`<table class="attempts">
  <caption>Requests to ${labelOf(f.platform)}</caption>
  <thead><tr><th scope="col">Time</th><th scope="col">Status code</th><th scope="col" class="num">Duration</th><th scope="col">Answer</th></tr></thead>
  <tbody>
  ${f.attempt_log.map(
    (a) => html`<tr>
    <td>${formatTime(a.attempted_at)}</td>
    <td>${a.status_code === null ? 'no answer' : String(a.status_code)}</td>
    <td class="num">${a.duration_ms} ms</td>
    <td>${a.platform_response === '' ? html`<span class="hint">(no body)</span>` : html`<pre>${a.platform_response}</pre>`}${a.note ? html`<p class="note">Left out: ${a.note}</p>` : ''}</td>
  </tr>`,
  )}
  </tbody>
</table>`
}
</article>`,
      )
}
</section>
<section aria-labelledby="rec-h">
<h2 id="rec-h">Stored record</h2>
<pre class="record">${JSON.stringify(record, null, 2)}</pre>
</section>`;
}
