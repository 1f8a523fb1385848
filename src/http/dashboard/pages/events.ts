/** The events explorer: the list API's filters, and each event's stored (hashed) record. */
import type { Context } from '../../../domain/context.ts';
import {
  cursorOf,
  type ExplorerInput,
  exploreEvents,
} from '../../../domain/events/explore-events.ts';
import { eventRecord, listEvents } from '../../../domain/events/list-events.ts';
import { getEventWithForwarding } from '../../../domain/forwarding/event-forwarding.ts';
import { isPlatform, PLATFORM_MODULES } from '../../../domain/forwarding/platforms/registry.ts';
import { destinationName } from '../../../domain/stats/diagnostics.ts';
import { formatTime, type Html, html } from '../html.ts';
import { money, noPixels, pickPixel, pixelPicker, problemText, stackTable } from './common.ts';

export interface EventFilters extends ExplorerInput {
  pixel_id?: string;
}

const FILTERS = [
  'event_name',
  'start_date',
  'end_date',
  'source',
  'status',
  'destination_id',
] as const;

export async function eventsBody(ctx: Context, filters: EventFilters): Promise<Html> {
  const { pixels, pixel } = await pickPixel(ctx, filters.pixel_id);
  if (!pixel) return noPixels;
  const page = await exploreEvents({ ctx, pixelId: pixel.id, input: filters });
  const value = (k: (typeof FILTERS)[number]) => filters[k]?.trim() ?? '';
  const names = new Map(page.destinations.map((d) => [d.id, destinationName(d)]));
  const option = (v: string, label: string, current: string) =>
    html`<option value="${v}"${current === v ? html` selected` : ''}>${label}</option>`;
  const extra = html`<div class="field"><label for="event_name">Event name</label><input id="event_name" name="event_name" value="${value('event_name')}" placeholder="Purchase"></div>
<div class="field"><label for="start_date">From</label><input id="start_date" name="start_date" type="date" value="${value('start_date')}"></div>
<div class="field"><label for="end_date">To</label><input id="end_date" name="end_date" type="date" value="${value('end_date')}"></div>
<div class="field"><label for="source">Source</label><select id="source" name="source">${option('', 'Any', value('source'))}${option('browser', 'Browser', value('source'))}${option('server', 'Server', value('source'))}</select></div>
<div class="field"><label for="status">Forwarding</label><select id="status" name="status">${option('', 'Any status', value('status'))}${['forwarded', 'failed', 'skipped', 'pending'].map((st) => option(st, st[0]!.toUpperCase() + st.slice(1), value('status')))}</select></div>
${
  page.destinations.length === 0
    ? ''
    : html`<div class="field"><label for="destination_id">Destination</label><select id="destination_id" name="destination_id">${option('', 'Any destination', value('destination_id'))}${page.destinations.map((d) => option(d.id, names.get(d.id)!, value('destination_id')))}</select></div>`
}`;
  const link = (cursor: Record<string, string>) => {
    const params = new URLSearchParams({ pixel_id: pixel.id });
    for (const k of FILTERS) if (value(k) !== '') params.set(k, value(k));
    for (const [k, v] of Object.entries(cursor)) params.set(k, v);
    return `/dashboard/events?${params}`;
  };
  const first = page.events[0];
  const last = page.events.at(-1);
  const filtered = value('status') !== '' || value('source') !== '';
  const total = filtered
    ? null
    : (
        await listEvents({
          ctx,
          pixelId: pixel.id,
          query: {
            limit: 1,
            ...(value('event_name') && { event_name: value('event_name') }),
            ...(value('start_date') && { start_date: value('start_date') }),
            ...(value('end_date') && { end_date: value('end_date') }),
          },
        })
      ).total;
  const eventUrl = (id: string) =>
    `/dashboard/events/${encodeURIComponent(pixel.id)}/${encodeURIComponent(id)}`;
  return html`${pixelPicker('/dashboard/events', pixels, pixel, extra)}
<p class="summary" role="status">${
    total === null
      ? `${page.events.length} events shown`
      : `${total.toLocaleString('en-US')} matching events`
  }.</p>
${
  page.events.length === 0
    ? html`<p>No events match.</p>`
    : stackTable({
        className: 'events',
        columns: [
          { label: 'Time' },
          { label: 'Event' },
          { label: 'Source' },
          { label: 'Match', num: true },
          { label: 'Destinations' },
          { label: 'Value', num: true },
          { label: 'Record' },
        ],
        rows: page.events.map(({ event: e, forwarding }) => {
          const r = eventRecord(e);
          return [
            formatTime(r.timestamp),
            html`<a href="${eventUrl(e.eventId)}">${e.eventName}<span class="visually-hidden"> ${e.eventId}</span></a> <code class="event-id">${e.eventId}</code>${r.dropped.length > 0 ? html` <span class="status dropped" title="Stored without ${r.dropped.join(', ')}: could not be used">${r.dropped.length} dropped</span>` : ''}`,
            r.source,
            r.match_quality.score.toFixed(1),
            forwarding.length === 0
              ? html`<span class="hint">none</span>`
              : html`<ul class="badges">${forwarding.map((f) => html`<li><span class="status ${f.status}">${names.get(f.destinationId) ?? 'Deleted destination'}: ${f.status}</span></li>`)}</ul>`,
            e.value === null ? '—' : money(e.value, e.currency),
            html`<details><summary>View record<span class="visually-hidden"> of ${e.eventId}</span></summary><pre class="record">${JSON.stringify(r, null, 2)}</pre></details>`,
          ];
        }),
      })
}
<nav aria-label="Pages" class="pager">
  ${page.newer && first ? html`<a href="${link({ after: cursorOf(first.event.timestamp, first.seq) })}">← Newer</a>` : ''}
  ${page.older && last ? html`<a href="${link({ before: cursorOf(last.event.timestamp, last.seq) })}">Older →</a>` : ''}
</nav>`;
}

/**
 * One event as stored (hashed), its match quality and its forwarding ledger: per destination
 * the outcome, and every request that carried it with the platform's answer.
 */
export async function eventBody(ctx: Context, pixelId: string, eventId: string): Promise<Html> {
  const e = await getEventWithForwarding({ ctx, pixelId, eventId });
  const destinations = await ctx.store.destinations.listDestinations(ctx.account.id, pixelId);
  const names = new Map(destinations.map((d) => [d.id, destinationName(d)]));
  const problem = problemText;
  const replayUrl = (destinationId: string) =>
    `/dashboard/events/${encodeURIComponent(pixelId)}/${encodeURIComponent(eventId)}/replay/${encodeURIComponent(destinationId)}`;
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
  ${e.value === null ? '' : html`<dt>Value</dt><dd>${money(e.value, e.currency)}</dd>`}
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
        (
          f,
        ) => html`<article class="forwarding" aria-label="Forwarding to ${names.get(f.destination_id) ?? f.destination_id}">
<h3>${names.get(f.destination_id) ?? 'Deleted destination'} <span class="status ${f.status}">${f.status}</span></h3>
<dl class="facts">
  <dt>Destination</dt><dd><a href="/dashboard/pixels/${encodeURIComponent(pixelId)}/destinations/${encodeURIComponent(f.destination_id)}">${names.get(f.destination_id) ?? labelOf(f.platform)}</a> <span class="hint">(${labelOf(f.platform)}, <code>${f.destination_id}</code>)</span></dd>
  <dt>Status</dt><dd><span class="status ${f.status}">${f.status}</span></dd>
  <dt>Attempts</dt><dd>${f.attempts}</dd>
  ${f.reason ? html`<dt>Reason</dt><dd>${problem(f.reason)}</dd>` : ''}
  ${f.last_error ? html`<dt>Last error</dt><dd>${problem(f.last_error)}</dd>` : ''}
  ${f.forwarded_at ? html`<dt>Forwarded</dt><dd>${formatTime(f.forwarded_at)}</dd>` : ''}
</dl>
${
  (f.status === 'failed' || f.status === 'skipped') && names.has(f.destination_id)
    ? html`<form method="post" action="${replayUrl(f.destination_id)}" class="inline"><button type="submit">Send again to ${names.get(f.destination_id)}</button></form>`
    : ''
}
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
