/**
 * HTML for the server-rendered dashboard: a tagged template that escapes every interpolated
 * value unless it is already `Html` (made by this tag or `raw`). Nothing the account sent (event
 * names, URLs, descriptions) can become markup.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += render(parts[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup made elsewhere and trusted as is (only for constants in this folder). */
export const raw = (markup: string): Html => new Html(markup);

/**
 * JSON for a `<script type="application/json">` block: `<` escaped so no value can close the
 * element; the page script reads it with JSON.parse (no inline script runs under the CSP).
 */
export function jsonData(id: string, value: unknown): Html {
  const json = JSON.stringify(value).replace(/</g, '\\u003c');
  return raw(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}

/** `2026-03-01 12:00:05 UTC`: one unambiguous form everywhere on the dashboard. */
export function formatTime(iso: string | null): string {
  if (iso === null) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}
