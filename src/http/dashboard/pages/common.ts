import type { Context } from '../../../domain/context.ts';
import { listPixels } from '../../../domain/pixels/pixels.ts';
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
