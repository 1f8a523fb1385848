import type { Context } from '../../../domain/context.ts';
import { getPixel, listPixels } from '../../../domain/pixels/pixels.ts';
import { formatTime, type Html, html } from '../html.ts';
import { copyButton } from './common.ts';

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
</form>
${await browserSetup(ctx, p)}`;
}

/** How a server reads the visitor id the snippet sets, per language, to send as anonymous_id. */
const READ_VISITOR: Array<[string, string]> = [
  ['Node (Express)', 'const anonymousId = req.cookies._tw_id;'],
  [
    'Python (Django / Flask)',
    "anonymous_id = request.COOKIES.get('_tw_id')  # Flask: request.cookies",
  ],
  ['PHP', "$anonymousId = $_COOKIE['_tw_id'] ?? null;"],
  ['Ruby (Rails)', 'anonymous_id = cookies[:_tw_id]'],
  ['Go (net/http)', 'c, err := r.Cookie("_tw_id") // c.Value when err == nil'],
];

/**
 * The pixel's browser setup: its publishable key, the snippet to paste, how a server passes the
 * visitor on, and whether a browser event arrived lately (the identities kept 7 days).
 */
async function browserSetup(ctx: Context, p: Awaited<ReturnType<typeof getPixel>>): Promise<Html> {
  const last = await ctx.store.matchKeys.lastBrowserHit(ctx.account.id, p.id);
  const snippet = `<script>window.trackway=window.trackway||function(){(trackway.q=trackway.q||[]).push(arguments)}</script>
<script async src="https://${p.tracking_domain}/v1/pixel.js" data-key="${p.publishable_key}"></script>`;
  const purchase = `{"pixel_id": "${p.id}", "event_name": "Purchase", "event_id": "order-1001",
 "value": 49.99, "currency": "EUR", "anonymous_id": "<the _tw_id cookie>",
 "user_data": {"email": "jane@example.com"}}`;
  return html`<section aria-labelledby="browser-h">
<h2 id="browser-h">Browser collection</h2>
<dl class="facts">
  <dt>Publishable key</dt><dd><code id="publishable-key">${p.publishable_key}</code> ${copyButton('publishable-key', 'the publishable key')}</dd>
  <dt>Last browser hit</dt><dd>${last === null ? 'none in the last 7 days' : formatTime(last.toISOString())}</dd>
</dl>
<p>Paste into every page's <code>&lt;head&gt;</code> (served from the tracking domain or a path proxy on the shop's own site):</p>
<pre class="record"><code id="snippet">${snippet}</code></pre>
<p>${copyButton('snippet', 'the snippet')}</p>
<form method="post" action="/dashboard/pixels/${p.id}/publishable-key" class="stack">
  <button type="submit">Rotate the publishable key</button>
  <p class="hint">The old key keeps working for 24 hours.</p>
</form>
<h3>Server events: name the visitor</h3>
<p>Read the <code>_tw_id</code> cookie on your server and send it as <code>anonymous_id</code>: the event gets the click ids, cookies, IP and user agent of that visitor's browser.</p>
<dl class="facts">
  ${READ_VISITOR.map(([language, code]) => html`<dt>${language}</dt><dd><code>${code}</code></dd>`)}
</dl>
<pre class="record"><code>${purchase}</code></pre>
</section>`;
}
