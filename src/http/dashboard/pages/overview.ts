/**
 * Overview: usage against the plan (this minute, today) and, for one pixel, events per hour by
 * name (the 20 busiest, the rest as "other") and revenue per hour, drawn by Chart.js.
 */
import type { Context } from '../../../domain/context.ts';
import { topEventStats } from '../../../domain/stats/event-stats.ts';
import { resolvePeriod, revenueOf } from '../../../domain/stats/get-diagnostics.ts';
import { type Html, html, jsonData } from '../html.ts';
import { moneyList, noPixels, periodFields, pickPixel, pixelPicker, stackTable } from './common.ts';

const HOUR_MS = 3_600_000;
/** Event names charted one by one; the rest are one "other" series (contract §21). */
export const CHARTED_NAMES = 20;

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
  query: { pixel_id?: string; period?: string; start_date?: string; end_date?: string },
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
  // The overview opens on the last 24 hours, as it always has.
  const period = resolvePeriod(query, ctx.clock.now(), '24h');
  // Hours up to a month (744 bars); days beyond, so a chart never has more than 1,000 bars.
  const interval = period.lastHour - period.firstHour + 1 > 31 * 24 ? 'day' : 'hour';
  const width = interval === 'hour' ? HOUR_MS : 24 * HOUR_MS;
  const first = Math.floor((period.firstHour * HOUR_MS) / width);
  const last = Math.floor((period.lastHour * HOUR_MS) / width);
  const buckets = last - first + 1;
  const [stats, revenueRows] = await Promise.all([
    topEventStats({
      ctx,
      pixelId: pixel.id,
      query: {
        interval,
        start_date: new Date(first * width).toISOString(),
        end_date: period.to.toISOString(),
      },
      top: CHARTED_NAMES,
    }),
    revenueOf({ ctx, pixelId: pixel.id, period }),
  ]);
  // The names beyond the busiest, as one series and one row (never a real name's key).
  const other = `Other (${stats.otherNames.toLocaleString('en-US')} names)`;
  const labels = Array.from({ length: buckets }, (_, i) =>
    new Date((first + i) * width).toISOString(),
  );
  const index = new Map(labels.map((l, i) => [l, i]));
  const counts = new Map<string, number[]>();
  const totals = new Map<string, { count: number }>();
  for (const b of stats.buckets) {
    const i = index.get(b.start.toISOString());
    if (i === undefined) continue;
    const name = b.eventName ?? other;
    let series = counts.get(name);
    if (!series) {
      series = new Array<number>(buckets).fill(0);
      counts.set(name, series);
    }
    series[i] = b.count;
    const t = totals.get(name) ?? { count: 0 };
    t.count += b.count;
    totals.set(name, t);
  }
  // Revenue per currency: one series and one sum each, never added across currencies.
  const revenue = new Map<string, number[]>();
  const byCurrency = new Map<string, number>();
  for (const r of revenueRows) {
    const i = Math.floor((r.hour * HOUR_MS) / width) - first;
    if (i < 0 || i >= buckets) continue;
    let series = revenue.get(r.currency);
    if (!series) {
      series = new Array<number>(buckets).fill(0);
      revenue.set(r.currency, series);
    }
    series[i] = (series[i] ?? 0) + r.valueSum;
    byCurrency.set(r.currency, (byCurrency.get(r.currency) ?? 0) + r.valueSum);
  }
  const sumsOf = (m: Map<string, number> | undefined) =>
    [...(m ?? new Map<string, number>())]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([currency, valueSum]) => ({ currency, valueSum }));
  const dates = (d: Date) => d.toISOString().slice(0, 10);
  const periodPicker = periodFields(
    period.period,
    period.period === 'custom' ? dates(period.from) : '',
    period.period === 'custom' ? dates(period.to) : '',
  );
  const span = PERIOD_WORDS[period.period] ?? 'the chosen dates';
  const per = interval === 'hour' ? 'hour' : 'day';
  // Busiest first, "other" last.
  const names = [...totals.keys()]
    .filter((n) => n !== other)
    .sort((a, b) => totals.get(b)!.count - totals.get(a)!.count || (a < b ? -1 : 1));
  if (totals.has(other)) names.push(other);
  // The table's names' revenue (one read bounded by them); "other" is the rest of each sum.
  const byName = new Map<string, Map<string, number>>();
  const named = names.filter((n) => n !== other);
  for (const r of await revenueOf({ ctx, pixelId: pixel.id, period, names: named })) {
    const sums = byName.get(r.eventName ?? '') ?? new Map<string, number>();
    sums.set(r.currency, (sums.get(r.currency) ?? 0) + r.valueSum);
    byName.set(r.eventName ?? '', sums);
  }
  if (totals.has(other)) {
    const rest = new Map(byCurrency);
    for (const sums of byName.values()) {
      for (const [c, v] of sums) rest.set(c, (rest.get(c) ?? 0) - v);
    }
    byName.set(other, new Map([...rest].filter(([, v]) => Math.abs(v) > 1e-9)));
  }
  return html`${usageHtml}
<section aria-labelledby="charts-h">
<h2 id="charts-h">Events per ${per}</h2>
${pixelPicker('/dashboard', pixels, pixel, periodPicker)}
${jsonData('overview-data', {
  labels,
  interval,
  events: names.map((name) => ({ name, data: counts.get(name)! })),
  revenue: sumsOf(byCurrency).map(({ currency }) => ({ currency, data: revenue.get(currency)! })),
})}
<div class="charts">
  <figure><div class="chart-box"><canvas id="events-chart" role="img" aria-label="Events per ${per} by event name, ${span}"></canvas></div><figcaption>Events per ${per}, by event name</figcaption></figure>
  <figure><div class="chart-box"><canvas id="revenue-chart" role="img" aria-label="Revenue per ${per} in each currency, ${span}"></canvas></div><figcaption>Revenue per ${per}, one line per currency: ${moneyList(sumsOf(byCurrency))}</figcaption></figure>
</div>
${stackTable({
  caption: 'Totals for the period',
  columns: [{ label: 'Event' }, { label: 'Events', num: true }, { label: 'Revenue', num: true }],
  rows: names.map((name) => [
    name,
    totals.get(name)!.count.toLocaleString('en-US'),
    moneyList(sumsOf(byName.get(name))),
  ]),
  empty: 'No events in this period.',
})}
</section>`;
}

const PERIOD_WORDS: Record<string, string> = {
  '24h': 'last 24 hours',
  '7d': 'last 7 days',
  '30d': 'last 30 days',
};
