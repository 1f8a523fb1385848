import type { Context } from '../../../domain/context.ts';
import { networkErrorText } from '../../../domain/forwarding/network-errors.ts';
import { listPixels, pixelObject } from '../../../domain/pixels/pixels.ts';
import type { PixelObject } from '../../../domain/pixels/schemas.ts';
import { type Html, html } from '../html.ts';

/** Every pixel of the account, for the pickers (plans allow at most 50; enterprise sees 100). */
export async function allPixels(ctx: Context): Promise<PixelObject[]> {
  return (await listPixels({ ctx, query: { limit: 100 } })).pixels;
}

/** The pixel a page shows: the one asked for if it is the account's, else the newest. */
export function chosenPixel(pixels: PixelObject[], asked: string | undefined): PixelObject | null {
  return pixels.find((p) => p.id === asked) ?? pixels[0] ?? null;
}

/**
 * The picker's pixels and the pixel a page shows. One asked for beyond the picker's page (an
 * account with more than 100 pixels) is read by id, account-scoped, and added to the picker,
 * so the page shows it and its forms post to it rather than to the newest pixel.
 */
export async function pickPixel(
  ctx: Context,
  asked: string | undefined,
): Promise<{ pixels: PixelObject[]; pixel: PixelObject | null }> {
  const pixels = await allPixels(ctx);
  if (asked !== undefined && !pixels.some((p) => p.id === asked)) {
    const found = await ctx.store.pixels.getPixel(ctx.account.id, asked);
    if (found) return { pixels: [...pixels, pixelObject(found)], pixel: pixelObject(found) };
  }
  return { pixels, pixel: chosenPixel(pixels, asked) };
}

export function pixelPicker(
  action: string,
  pixels: PixelObject[],
  chosen: PixelObject,
  extra: Html | string = '',
): Html {
  return html`<form method="get" action="${action}" class="filters">
  <div class="field"><label for="pixel_id">Pixel</label>
  <select id="pixel_id" name="pixel_id">
    ${pixels.map(
      (p) =>
        html`<option value="${p.id}"${p.id === chosen.id ? html` selected` : ''}>${p.name} (${p.id})</option>`,
    )}
  </select></div>
  ${extra}
  <button type="submit">Show</button>
</form>`;
}

export const noPixels = html`<p>No pixels yet. <a href="/dashboard/pixels">Create a pixel</a> to start tracking events.</p>`;

/** An amount in its currency (`€1,234.50`, `US$…` as Intl writes it); '' is no currency. */
export function money(value: number, currency: string | null): string {
  if (currency) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
    } catch {
      // Not an ISO 4217 code Intl knows: the number and the code as sent.
    }
  }
  const n = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(value);
  return currency ? `${n} ${currency}` : `${n} (no currency)`;
}

/** Sums per currency, each formatted, joined (`€10.00 · $25.00`); '—' when there is none. */
export function moneyList(sums: ReadonlyArray<{ currency: string; valueSum: number }>): string {
  return sums.length === 0 ? '—' : sums.map((s) => money(s.valueSum, s.currency)).join(' · ');
}

export interface Column {
  label: string;
  num?: boolean;
}

/**
 * A table that becomes a list on a phone: each cell carries its column's name (`data-label`),
 * which the stylesheet shows beside the value when the table is stacked.
 */
export function stackTable(options: {
  caption?: Html | string;
  columns: Column[];
  rows: Array<Array<Html | string | number>>;
  empty?: string;
  className?: string;
}): Html {
  const { columns, rows } = options;
  return html`<table class="stack${options.className ? ` ${options.className}` : ''}">
${options.caption ? html`<caption>${options.caption}</caption>` : ''}
<thead><tr>${columns.map((c) => html`<th scope="col"${c.num ? html` class="num"` : ''}>${c.label}</th>`)}</tr></thead>
<tbody>
${
  rows.length === 0
    ? html`<tr><td colspan="${columns.length}">${options.empty ?? 'Nothing in this period.'}</td></tr>`
    : rows.map(
        (r) =>
          html`<tr>${r.map((cell, i) => html`<td data-label="${columns[i]?.label ?? ''}"${columns[i]?.num ? html` class="num"` : ''}>${cell}</td>`)}</tr>`,
      )
}
</tbody>
</table>`;
}

/** The period fields of a picker: 24 h, 7 d, 30 d or custom dates (custom shows them). */
export function periodFields(period: string, start = '', end = ''): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}"${period === value ? html` selected` : ''}>${label}</option>`;
  return html`<div class="field"><label for="period">Period</label>
<select id="period" name="period" data-custom-period>
  ${option('24h', 'Last 24 hours')}${option('7d', 'Last 7 days')}${option('30d', 'Last 30 days')}${option('custom', 'Custom dates')}
</select></div>
<div class="field custom-date"><label for="start_date">From</label><input id="start_date" name="start_date" type="date" value="${start}"></div>
<div class="field custom-date"><label for="end_date">To</label><input id="end_date" name="end_date" type="date" value="${end}"></div>`;
}

/** Text with `code` spans (the findings' field names) as markup, the rest escaped. */
export function withCode(text: string): Html {
  return html`${text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

/**
 * A button copying the text of the element `targetId` (an input's value) to the clipboard;
 * hidden until the page script shows it, since without the script it could not work.
 */
export function copyButton(targetId: string, what: string): Html {
  return html`<button type="button" class="copy" data-copy="${targetId}" hidden>Copy<span class="visually-hidden"> ${what}</span></button><span class="copy-status" role="status"></span>`;
}

/** A platform's error for people: a network failure in words, the raw text beside it. */
export function problemText(text: string): Html {
  const words = networkErrorText(text);
  return words === null
    ? html`${text}`
    : html`${words} <span class="hint">(<code>${text}</code>)</span>`;
}
