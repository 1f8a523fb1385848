/**
 * Diagnostics (issue 34): what is wrong with a pixel's data and where, the worst first as
 * sentences, then the figures they come from. Read from the rollups only (get-diagnostics.ts).
 */
import type { Context } from '../../../domain/context.ts';
import type { Diagnostics } from '../../../domain/stats/diagnostics.ts';
import {
  getDiagnostics,
  type PeriodInput,
  resolvePeriod,
  SHOWN_FINDINGS,
} from '../../../domain/stats/get-diagnostics.ts';
import { type Html, html } from '../html.ts';
import {
  money,
  noPixels,
  periodFields,
  pickPixel,
  pixelPicker,
  problemText,
  stackTable,
  withCode,
} from './common.ts';

const count = (n: number) => n.toLocaleString('en-US');
const share = (n: number, of: number) => (of === 0 ? '—' : `${Math.round((n / of) * 100)} %`);

export async function diagnosticsBody(
  ctx: Context,
  query: PeriodInput & { pixel_id?: string },
): Promise<{ body: Html; pixelId: string | null }> {
  const { pixels, pixel } = await pickPixel(ctx, query.pixel_id);
  if (!pixel) return { body: noPixels, pixelId: null };
  const period = resolvePeriod(query, ctx.clock.now());
  const d = await getDiagnostics({ ctx, pixelId: pixel.id, period });
  const dates = (date: Date) => date.toISOString().slice(0, 10);
  const picker = pixelPicker(
    '/dashboard/diagnostics',
    pixels,
    pixel,
    periodFields(
      period.period,
      period.period === 'custom' ? dates(period.from) : '',
      period.period === 'custom' ? dates(period.to) : '',
    ),
  );
  const body = html`${picker}
<p class="summary">${count(d.total)} events from ${period.from.toISOString().slice(0, 16).replace('T', ' ')} to ${period.to.toISOString().slice(0, 16).replace('T', ' ')} UTC.</p>
${findings(d)}
${events(d)}
${destinations(d, pixel.id)}
${coverage(d)}
${quality(d)}
${revenue(d)}`;
  return { body, pixelId: pixel.id };
}

function findings(d: Diagnostics): Html {
  return html`<section aria-labelledby="findings-h" class="findings">
<h2 id="findings-h">What to fix first</h2>
${
  d.findings.length === 0
    ? html`<p>Nothing stands out in this period.</p>`
    : html`<ol>${d.findings
        .slice(0, SHOWN_FINDINGS)
        .map(
          (f) =>
            html`<li>${withCode(f.text)}${f.href && f.linkText ? html` <a href="${f.href}">${f.linkText}</a>` : ''}</li>`,
        )}</ol>`
}
</section>`;
}

function events(d: Diagnostics): Html {
  const browser = d.bySource['browser'] ?? 0;
  const server = d.bySource['server'] ?? 0;
  const received = d.total + d.duplicates;
  return html`<section aria-labelledby="events-h">
<h2 id="events-h">Events</h2>
<dl class="facts">
  <dt>From browsers (the snippet)</dt><dd>${count(browser)} (${share(browser, d.total)})</dd>
  <dt>From servers</dt><dd>${count(server)} (${share(server, d.total)})</dd>
  <dt>Duplicates refused</dt><dd>${count(d.duplicates)} of ${count(received)} received (${share(d.duplicates, received)})</dd>
</dl>
${stackTable({
  caption: 'By event name',
  columns: [
    { label: 'Event' },
    { label: 'Events', num: true },
    { label: 'Browser', num: true },
    { label: 'Server', num: true },
  ],
  rows: d.byName
    .slice(0, 50)
    .map((n) => [
      n.eventName,
      count(n.n),
      count(n.bySource['browser'] ?? 0),
      count(n.bySource['server'] ?? 0),
    ]),
  empty: 'No events in this period.',
})}
</section>`;
}

function destinations(d: Diagnostics, pixelId: string): Html {
  if (d.destinations.length === 0) {
    return html`<section aria-labelledby="dest-h"><h2 id="dest-h">Destinations</h2>
<p>No destinations: <a href="/dashboard/destinations?pixel_id=${encodeURIComponent(pixelId)}">add one</a> to forward events to an ad platform.</p></section>`;
  }
  const rate = (n: number, of: number) => `${count(n)} (${share(n, of)})`;
  const eventLink = (id: string) =>
    `/dashboard/events/${encodeURIComponent(pixelId)}/${encodeURIComponent(id)}`;
  return html`<section aria-labelledby="dest-h">
<h2 id="dest-h">Destinations</h2>
${stackTable({
  columns: [
    { label: 'Destination' },
    { label: 'Forwarded', num: true },
    { label: 'Failed', num: true },
    { label: 'Skipped', num: true },
    { label: 'Pending', num: true },
  ],
  rows: d.destinations.map((x) => [
    html`${x.name}${x.name === x.platform ? '' : html` <span class="hint">(${x.platform})</span>`}`,
    rate(x.counts.forwarded, x.total),
    rate(x.counts.failed, x.total),
    rate(x.counts.skipped, x.total),
    rate(x.counts.pending, x.total),
  ]),
})}
${d.destinations
  .filter((x) => x.reasons.length > 0)
  .map(
    (x) => html`<h3>Why events to ${x.name} were refused or skipped</h3>
${stackTable({
  columns: [
    { label: 'Status' },
    { label: 'Reason' },
    { label: 'Events', num: true },
    { label: 'Example' },
  ],
  rows: x.reasons
    .slice(0, 5)
    .map((r) => [
      html`<span class="status ${r.status}">${r.status}</span>`,
      r.reason ? problemText(r.reason) : '—',
      count(r.n),
      html`<a href="${eventLink(r.exampleEventId)}">Example<span class="visually-hidden"> of ${r.status} to ${x.name}: ${r.reason}</span></a>`,
    ]),
})}`,
  )}
</section>`;
}

function coverage(d: Diagnostics): Html {
  return html`<section aria-labelledby="keys-h">
<h2 id="keys-h">Match keys</h2>
${stackTable({
  caption: html`Share of events carrying each key; stitching added keys from the visitor's browser to ${count(d.enriched)} events (${share(d.enriched, d.total)}).`,
  columns: [
    { label: 'Key' },
    { label: 'Events with it', num: true },
    { label: 'Share', num: true },
    { label: 'Added by stitching', num: true },
  ],
  rows: d.coverage.map((c) => [
    c.label,
    count(c.n),
    share(c.n, d.total),
    c.key === 'email' || c.key === 'phone' || c.key === 'external_id' ? '—' : count(c.enriched),
  ]),
})}
</section>`;
}

function quality(d: Diagnostics): Html {
  return html`<section aria-labelledby="quality-h">
<h2 id="quality-h">Consent and dropped values</h2>
<dl class="facts">
  <dt>Consent to ad user data denied</dt><dd>${count(d.consentDenied)} events (${share(d.consentDenied, d.total)})</dd>
</dl>
${stackTable({
  caption: 'user_data values left out as unusable (contract §19)',
  columns: [{ label: 'Field' }, { label: 'Values dropped', num: true }],
  rows: d.dropped.map((x) => [html`<code>${x.field}</code>`, count(x.n)]),
  empty: 'None dropped in this period.',
})}
</section>`;
}

function revenue(d: Diagnostics): Html {
  return html`<section aria-labelledby="revenue-h">
<h2 id="revenue-h">Revenue</h2>
${stackTable({
  caption: 'Sum of value per currency (never added across currencies)',
  columns: [{ label: 'Currency' }, { label: 'Events', num: true }, { label: 'Revenue', num: true }],
  rows: d.revenue.map((r) => [r.currency || 'none', count(r.n), money(r.valueSum, r.currency)]),
  empty: 'No event with a value in this period.',
})}
</section>`;
}
