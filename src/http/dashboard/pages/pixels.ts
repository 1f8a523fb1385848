import type { Context } from '../../../domain/context.ts';
import { getPixel, listPixels } from '../../../domain/pixels/pixels.ts';
import { formatTime, type Html, html } from '../html.ts';

/** A page of the list, newest first: an account may have more pixels than one page shows. */
const PAGE = 100;

export async function pixelsBody(
  ctx: Context,
  form: Record<string, string> = {},
  from = '0',
): Promise<Html> {
  const offset = Math.max(0, Number.parseInt(from, 10) || 0);
  const { pixels, total } = await listPixels({ ctx, query: { limit: PAGE, offset } });
  const pager =
    total > PAGE
      ? html`<nav aria-label="Pages" class="pager">
  <span>${offset + 1}–${offset + pixels.length} of ${total}</span>
  ${offset > 0 ? html`<a href="/dashboard/pixels?offset=${Math.max(0, offset - PAGE)}">← Newer</a>` : ''}
  ${offset + pixels.length < total ? html`<a href="/dashboard/pixels?offset=${offset + PAGE}">Older →</a>` : ''}
</nav>`
      : '';
  return html`<section aria-labelledby="new-pixel-h">
<h2 id="new-pixel-h">Create a pixel</h2>
<form method="post" action="/dashboard/pixels" class="stack">
  <div class="field"><label for="name">Name</label><input id="name" name="name" required maxlength="200" value="${form['name'] ?? ''}"></div>
  <div class="field"><label for="domain">Domain</label><input id="domain" name="domain" required placeholder="shop.example.com" value="${form['domain'] ?? ''}"></div>
  <div class="field"><label for="tracking_domain">Tracking domain <span class="hint">(optional)</span></label><input id="tracking_domain" name="tracking_domain" value="${form['tracking_domain'] ?? ''}"></div>
  <button type="submit">Create pixel</button>
</form>
</section>
<section aria-labelledby="pixels-h">
<h2 id="pixels-h">Pixels</h2>
${
  pixels.length === 0
    ? html`<p>No pixels yet.</p>`
    : html`<table>
  <thead><tr><th scope="col">Name</th><th scope="col">Pixel ID</th><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${pixels.map(
    (p) => html`<tr>
    <td><a href="/dashboard/pixels/${p.id}">${p.name}</a></td>
    <td><code>${p.id}</code></td>
    <td>${p.domain}</td>
    <td><span class="status ${p.status}">${p.status}</span></td>
    <td>${formatTime(p.created_at)}</td>
    <td class="actions">
      <form method="post" action="/dashboard/pixels/${p.id}/status">
        <input type="hidden" name="status" value="${p.status === 'active' ? 'paused' : 'active'}">
        <button type="submit" aria-label="${p.status === 'active' ? 'Pause' : 'Resume'} ${p.name}">${p.status === 'active' ? 'Pause' : 'Resume'}</button>
      </form>
    </td>
  </tr>`,
  )}
  </tbody>
</table>${pager}`
}
</section>`;
}

export async function pixelEditBody(ctx: Context, pixelId: string): Promise<Html> {
  const p = await getPixel({ ctx, pixelId });
  return html`<p><a href="/dashboard/pixels">← All pixels</a></p>
<dl class="facts">
  <dt>Pixel ID</dt><dd><code>${p.id}</code></dd>
  <dt>Created</dt><dd>${formatTime(p.created_at)}</dd>
</dl>
<form method="post" action="/dashboard/pixels/${p.id}" class="stack">
  <div class="field"><label for="name">Name</label><input id="name" name="name" required maxlength="200" value="${p.name}"></div>
  <div class="field"><label for="domain">Domain</label><input id="domain" name="domain" required value="${p.domain}"></div>
  <div class="field"><label for="tracking_domain">Tracking domain</label><input id="tracking_domain" name="tracking_domain" required value="${p.tracking_domain}"></div>
  <div class="field"><label for="status">Status</label>
    <select id="status" name="status">
      <option value="active"${p.status === 'active' ? html` selected` : ''}>Active: events are accepted</option>
      <option value="paused"${p.status === 'paused' ? html` selected` : ''}>Paused: events are refused with 409</option>
    </select></div>
  <button type="submit">Save pixel</button>
</form>`;
}
