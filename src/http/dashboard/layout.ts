import type { Account } from '../../domain/model.ts';
import { type Html, html } from './html.ts';

/**
 * The navigation, in order. A new section (destinations, when forwarding exists) is one more
 * entry here and one more page module.
 */
export const NAV = [
  { path: '/dashboard', label: 'Overview' },
  { path: '/dashboard/diagnostics', label: 'Diagnostics' },
  { path: '/dashboard/pixels', label: 'Pixels' },
  { path: '/dashboard/events', label: 'Events' },
  { path: '/dashboard/tail', label: 'Live tail' },
  { path: '/dashboard/destinations', label: 'Destinations' },
  { path: '/dashboard/webhooks', label: 'Webhooks' },
  { path: '/dashboard/keys', label: 'API keys' },
] as const;

export type Section = (typeof NAV)[number]['path'];

function head(title: string): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Trackway</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/chart.umd.min.js" defer></script>
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>`;
}

export interface Flash {
  notice?: string | undefined;
  error?: string | undefined;
}

export function flashMessages(flash: Flash): Html {
  return html`${flash.notice ? html`<p class="notice" role="status">${flash.notice}</p>` : ''}${
    flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''
  }`;
}

export function page(options: {
  title: string;
  section: Section;
  account: Account;
  body: Html;
  flash?: Flash;
}): Html {
  const { title, section, account, body } = options;
  return html`<!doctype html>
<html lang="en">
${head(title)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">Trackway</span>
  <span class="account">${account.name} · <span class="plan">${account.plan}</span></span>
  <form method="post" action="/dashboard/sign-out"><button type="submit" class="link">Sign out</button></form>
</header>
<nav aria-label="Dashboard">
  <ul>
    ${NAV.map(
      (item) =>
        html`<li><a href="${item.path}"${item.path === section ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
    )}
  </ul>
</nav>
<main id="main">
<h1>${title}</h1>
${flashMessages(options.flash ?? {})}
${body}
</main>
</body>
</html>`;
}

/** A page outside the signed-in shell (sign-in, errors before a session exists). */
export function barePage(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
${head(title)}
<body class="bare">
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}
