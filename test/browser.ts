/**
 * One headless Debian chromium driven by playwright-core, for the dashboard's browser suite and
 * `npm run screenshots`. The flags keep it quiet and self-contained: no sandbox (containers),
 * no GPU, no background traffic, a throwaway profile (playwright's launch() always starts one in
 * a fresh temporary directory; HOME points into ours too, so nothing reads the user's).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env['TRACKWAY_CHROMIUM'] ?? '/usr/bin/chromium';

export interface LaunchedBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** `extraArgs`: more flags, e.g. `--host-resolver-rules` to serve test host names locally. */
export async function launchChromium(extraArgs: string[] = []): Promise<LaunchedBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'trackway-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      ...extraArgs,
    ],
    // A fresh profile: playwright refuses --user-data-dir with launch(), so it goes here.
    env: { ...process.env, HOME: profile },
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it stands. Evaluated through the
 * DevTools protocol, so the page's Content-Security-Policy stays on while it runs.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, run in the page (this project compiles without the DOM library).
  const violations = (await page.evaluate(
    'axe.run(document).then((result) => result.violations)',
  )) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** What the page predicates below read in the page (the suites compile without the DOM lib). */
interface PageGlobals {
  Chart?: { getChart(canvas: unknown): unknown };
  trackway?: { loaded?: boolean };
  document: {
    querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null }>;
  };
}

/**
 * Waits until Chart.js has drawn on `count` canvases. A function, not a string: a string
 * predicate that is still false at first is polled in the page with eval, which the
 * dashboard's Content-Security-Policy refuses (EvalError), so it failed whenever the charts
 * came a moment late.
 */
export function chartsDrawn(page: Page, count: number): Promise<unknown> {
  return page.waitForFunction((n) => {
    const { Chart, document } = globalThis as unknown as PageGlobals;
    if (Chart === undefined) return false;
    return (
      Array.from(document.querySelectorAll('canvas')).filter((c) => Chart.getChart(c)).length === n
    );
  }, count);
}

/** Waits until the API reference has drawn and docs.js has named every Redoc picker. */
export function docsPickersNamed(page: Page): Promise<unknown> {
  return page.waitForFunction(() => {
    const pickers = Array.from(
      (globalThis as unknown as PageGlobals).document.querySelectorAll('#redoc select'),
    );
    return pickers.length > 0 && pickers.every((s) => s.getAttribute('aria-label'));
  });
}

/** Waits until the snippet has loaded (`window.trackway.loaded`). */
export function snippetLoaded(page: Page): Promise<unknown> {
  return page.waitForFunction(
    () => (globalThis as unknown as PageGlobals).trackway?.loaded === true,
  );
}
