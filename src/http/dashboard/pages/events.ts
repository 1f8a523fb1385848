/** The events explorer: the list API's filters, and each event's stored (hashed) record. */
import type { Context } from '../../../domain/context.ts';
import { listEvents } from '../../../domain/events/list-events.ts';
import { formatTime, type Html, html } from '../html.ts';
import { allPixels, chosenPixel, noPixels, pixelPicker } from './common.ts';

export interface EventFilters {
  pixel_id?: string;
  event_name?: string;
  start_date?: string;
  end_date?: string;
  offset?: string;
}

export async function eventsBody(ctx: Context, filters: EventFilters): Promise<Html> {
  const pixels = await allPixels(ctx);
  const pixel = chosenPixel(pixels, filters.pixel_id);
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
  <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Event ID</th><th scope="col" class="num">Value</th><th scope="col">Record</th></tr></thead>
  <tbody>
  ${list.events.map(
    (e) => html`<tr>
    <td>${formatTime(e.timestamp)}</td>
    <td>${e.event_name}</td>
    <td><code>${e.event_id}</code></td>
    <td class="num">${e.value === null ? '—' : `${e.value} ${e.currency ?? ''}`}</td>
    <td><details><summary>View record<span class="visually-hidden"> of ${e.event_id}</span></summary><pre class="record">${JSON.stringify(e, null, 2)}</pre></details></td>
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
