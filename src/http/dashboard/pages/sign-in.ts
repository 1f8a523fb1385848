import { type Html, html } from '../html.ts';
import { barePage } from '../layout.ts';

export function signInPage(error?: string): Html {
  return barePage(
    'Sign in to Trackway',
    html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/dashboard/sign-in" class="stack">
  <div class="field">
    <label for="api_key">API key</label>
    <input id="api_key" name="api_key" type="password" required autocomplete="off" spellcheck="false" placeholder="tw_live_…">
  </div>
  <p class="hint">The key is used once to start a session; it is not kept in this browser.</p>
  <button type="submit">Sign in</button>
</form>`,
  );
}
