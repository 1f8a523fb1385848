/** Live tail: the page script follows the pixel's event stream (Server-Sent Events). */
import type { Context } from '../../../domain/context.ts';
import { type Html, html } from '../html.ts';
import { noPixels, pickPixel, pixelPicker } from './common.ts';

export async function tailBody(ctx: Context, query: { pixel_id?: string }): Promise<Html> {
  const { pixels, pixel } = await pickPixel(ctx, query.pixel_id);
  if (!pixel) return noPixels;
  return html`${pixelPicker('/dashboard/tail', pixels, pixel)}
<p id="tail-status" role="status" data-stream="/dashboard/pixels/${pixel.id}/stream">Connecting…</p>
<table class="events">
  <caption>Events of ${pixel.name} as they are stored, newest first</caption>
  <thead><tr><th scope="col">Received</th><th scope="col">Event</th><th scope="col">Event ID</th><th scope="col" class="num">Value</th><th scope="col">Record</th></tr></thead>
  <tbody id="tail-rows"></tbody>
</table>`;
}
