import type { Context } from '../../../domain/context.ts';
import { listKeys } from '../../../domain/keys/keys.ts';
import { formatTime, type Html, html } from '../html.ts';
import { copyButton } from './common.ts';

/** `created` is the key just made: shown in clear in this one response, never again. */
export async function keysBody(
  ctx: Context,
  currentKeyId: string,
  created?: { name: string; key: string },
): Promise<Html> {
  const { keys, total } = await listKeys({ ctx, query: { limit: 100 } });
  return html`${
    created
      ? html`<section class="secret" aria-labelledby="new-key-h">
<h2 id="new-key-h">New key “${created.name}”</h2>
<p>Copy it now: it is shown only this once. Only its hash is stored.</p>
<p><label for="new-key">API key</label> <input id="new-key" class="reveal" readonly value="${created.key}"> ${copyButton('new-key', 'the API key')}</p>
</section>`
      : ''
  }
<section aria-labelledby="create-key-h">
<h2 id="create-key-h">Create a key</h2>
<form method="post" action="/dashboard/keys" class="stack">
  <div class="field"><label for="key-name">Name</label><input id="key-name" name="name" required maxlength="100" placeholder="Checkout server"></div>
  <fieldset><legend>Scope</legend>
    <label><input type="radio" name="scope" value="full" checked> Full: every API route</label>
    <label><input type="radio" name="scope" value="ingest"> Ingest: only sending events (<code>POST /v1/track</code>, <code>/v1/track/batch</code>)</label>
  </fieldset>
  <button type="submit">Create key</button>
</form>
</section>
<section aria-labelledby="keys-h">
<h2 id="keys-h">Keys</h2>
<table>
  <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scope</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${keys.map(
    (k) => html`<tr>
    <td>${k.name || html`<span class="hint">(unnamed)</span>`}${k.id === currentKeyId ? html` <span class="hint">(this session)</span>` : ''}</td>
    <td><code>${k.prefix}…${k.last4}</code></td>
    <td>${k.scope}</td>
    <td>${formatTime(k.created_at)}</td>
    <td>${formatTime(k.last_used_at)}</td>
    <td>${k.revoked_at ? html`<span class="status paused">revoked ${formatTime(k.revoked_at)}</span>` : html`<span class="status active">active</span>`}</td>
    <td class="actions">${
      k.revoked_at
        ? ''
        : html`<form method="post" action="/dashboard/keys/${k.id}/revoke"><button type="submit" class="danger" aria-label="Revoke ${k.name || k.prefix}">Revoke</button></form>`
    }</td>
  </tr>`,
  )}
  </tbody>
</table>${
    total > keys.length
      ? html`<p class="hint">The oldest ${keys.length} of ${total} keys; the rest with <code>GET /v1/keys?offset=${keys.length}</code>.</p>`
      : ''
  }
</section>`;
}
