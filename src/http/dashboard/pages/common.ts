import type { Context } from '../../../domain/context.ts';
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
