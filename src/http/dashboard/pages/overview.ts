/**
 * Overview: usage against the plan (this minute, today) and, for one pixel, events per hour by
 * name (the 20 busiest, the rest as "other") and revenue per hour, drawn by Chart.js.
 */
import type { Context } from '../../../domain/context.ts';
import { topEventStats } from '../../../domain/stats/event-stats.ts';
import { type Html, html, jsonData } from '../html.ts';
import { noPixels, pickPixel, pixelPicker } from './common.ts';

const HOUR_MS = 3_600_000;
/** Event names charted one by one; the rest are one "other" series (contract §21). */
export const CHARTED_NAMES = 20;
export const PERIODS = { '24h': 24, '7d': 168 } as const;
export type Period = keyof typeof PERIODS;

export interface Usage {
  minute: { used: number; limit: number };
  day: { used: number; limit: number };
}

function meter(label: string, id: string, used: number, limit: number): Html {
  const percent = limit === 0 ? 0 : Math.min(100, Math.round((used / limit) * 100));
  return html`<div class="usage">
  <span id="${id}-label">${label}</span>
  <meter aria-labelledby="${id}-label" min="0" max="${limit}" value="${used}">${percent}%</meter>
  <span>${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} requests</span>
</div>`;
}

export async function overviewBody(
  ctx: Context,
  query: { pixel_id?: string; period?: string },
  usage: Usage | null,
): Promise<Html> {
  const usageHtml = usage
    ? html`<section aria-labelledby="usage-h"><h2 id="usage-h">Usage against the ${ctx.account.plan} plan</h2>
${meter('This minute', 'use-minute', usage.minute.used, usage.minute.limit)}
${meter('Today (UTC)', 'use-day', usage.day.used, usage.day.limit)}
</section>`
    : html`<p>Rate limits are switched off on this server.</p>`;
  const { pixels, pixel } = await pickPixel(ctx, query.pixel_id);
  if (!pixel) return html`${usageHtml}${noPixels}`;
  const period: Period = query.period === '7d' ? '7d' : '24h';
  const hours = PERIODS[period];
  const now = ctx.clock.now().getTime();
  const lastHour = Math.floor(now / HOUR_MS);
  const firstHour = lastHour - hours + 1;
  const stats = await topEventStats({
    ctx,
    pixelId: pixel.id,
    query: {
      interval: 'hour',
      start_date: new Date(firstHour * HOUR_MS).toISOString(),
      end_date: new Date(now).toISOString(),
    },
    top: CHARTED_NAMES,
  });
  // The names beyond the busiest, as one series and one row (never a real name's key).
  const other = `Other (${stats.otherNames.toLocaleString('en-US')} names)`;
  const labels = Array.from({ length: hours }, (_, i) =>
    new Date((firstHour + i) * HOUR_MS).toISOString(),
  );
  const index = new Map(labels.map((l, i) => [l, i]));
  const counts = new Map<string, number[]>();
  const revenue = new Array<number>(hours).fill(0);
  const totals = new Map<string, { count: number; value: number }>();
  for (const b of stats.buckets) {
    const i = index.get(b.start.toISOString());
    if (i === undefined) continue;
    const name = b.eventName ?? other;
    let series = counts.get(name);
    if (!series) {
      series = new Array<number>(hours).fill(0);
      counts.set(name, series);
    }
    series[i] = b.count;
    revenue[i] = (revenue[i] ?? 0) + b.valueSum;
    const t = totals.get(name) ?? { count: 0, value: 0 };
    t.count += b.count;
    t.value += b.valueSum;
    totals.set(name, t);
  }
  const periodPicker = html`<div class="field"><label for="period">Period</label>
<select id="period" name="period">
  <option value="24h"${period === '24h' ? html` selected` : ''}>Last 24 hours</option>
  <option value="7d"${period === '7d' ? html` selected` : ''}>Last 7 days</option>
</select></div>`;
  // Busiest first, "other" last.
  const names = [...totals.keys()]
    .filter((n) => n !== other)
    .sort((a, b) => totals.get(b)!.count - totals.get(a)!.count || (a < b ? -1 : 1));
  if (totals.has(other)) names.push(other);
  return html`${usageHtml}
<section aria-labelledby="charts-h">
<h2 id="charts-h">Events per hour</h2>
${pixelPicker('/dashboard', pixels, pixel, periodPicker)}
${jsonData('overview-data', {
  labels,
  events: names.map((name) => ({ name, data: counts.get(name)! })),
  revenue,
})}
<div class="charts">
  <figure><div class="chart-box"><canvas id="events-chart" role="img" aria-label="Events per hour by event name, ${period === '7d' ? 'last 7 days' : 'last 24 hours'}"></canvas></div><figcaption>Events per hour, by event name</figcaption></figure>
  <figure><div class="chart-box"><canvas id="revenue-chart" role="img" aria-label="Revenue per hour (sum of value), ${period === '7d' ? 'last 7 days' : 'last 24 hours'}"></canvas></div><figcaption>Revenue per hour (sum of <code>value</code>)</figcaption></figure>
</div>
<table>
  <caption>Totals for the period</caption>
  <thead><tr><th scope="col">Event</th><th scope="col" class="num">Events</th><th scope="col" class="num">Revenue</th></tr></thead>
  <tbody>
  ${
    names.length === 0
      ? html`<tr><td colspan="3">No events in this period.</td></tr>`
      : names.map((name) => {
          const t = totals.get(name)!;
          return html`<tr><td>${name}</td><td class="num">${t.count.toLocaleString('en-US')}</td><td class="num">${t.value.toLocaleString('en-US', { maximumFractionDigits: 2 })}</td></tr>`;
        })
  }
  </tbody>
</table>
</section>`;
}
