import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { bootApp, type TestApp } from './app.js';

/**
 * The operator's console in a real browser (Debian's Chromium driven by playwright-core), against
 * the real service over HTTPS: what the console tests share. Nothing here waits a fixed time:
 * Playwright waits for what a step needs.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * Where the screens are photographed: test-results/console/ (ignored by git), so a test run never
 * rewrites a tracked file. `npm run screenshots` points SCREENSHOTS_DIR at docs/images/, the
 * pictures docs/operations.md shows: looked at, then committed.
 */
export const SHOTS = path.resolve(
  process.env.SCREENSHOTS_DIR ?? path.join(import.meta.dirname, '..', '..', 'test-results', 'console'),
);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Every WCAG 2.2 A and AA rule (target size, focus not obscured…) and axe's best practices. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
export const TOKEN_FIELD = 'Operator token (fco_…) or ADMIN_TOKEN';
export const WIDTHS = [
  [1366, 768],
  [390, 844],
] as const;

export interface ConsoleBrowser {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Messages of the confirm() dialogs the console opened (each accepted). */
  dialogs: string[];
  /** Errors in the browser's console and uncaught exceptions: a test ends asserting there were none. */
  errors: string[];
}

export async function openBrowser(app: TestApp): Promise<ConsoleBrowser> {
  assert.ok(
    existsSync(CHROMIUM),
    `no Chromium at ${CHROMIUM}: npm test installs Debian's chromium package when it runs as root; else apt-get install chromium, or set CHROMIUM_PATH`,
  );
  mkdirSync(SHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const origin = new URL(app.url).origin;
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 1366, height: 768 },
  });
  context.setDefaultTimeout(30_000);
  // Nothing but this origin: the console must work with no CDN, and the CSP must allow nothing else.
  await context.route(
    (url) => url.origin !== origin,
    (route) => route.abort('blockedbyclient'),
  );
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      throw new Error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  const opened: ConsoleBrowser = { browser, context, page, dialogs: [], errors: [] };
  page.on('console', (m) => {
    // The browser logs every 4xx answer the console asked for; a refusal (a wrong token, a move
    // into its own branch) is the console's to say on the page, not an error of the page.
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) opened.errors.push(m.text());
  });
  page.on('pageerror', (e) => opened.errors.push(e.message));
  page.on('dialog', (dialog) => {
    opened.dialogs.push(dialog.message());
    void dialog.accept();
  });
  return opened;
}

/** A browser on the console of an app booted for it; close() closes the browser, then the app. */
export interface ConsoleSession extends ConsoleBrowser {
  app: TestApp;
  close(): Promise<void>;
}

/**
 * What a console test's before() does: the app booted with `env`, `prepare` (the data the test
 * needs, made before the browser opens), a browser on it and, unless `signIn` is false, the
 * console open and signed in with the admin token. A step that fails closes what was opened.
 */
export async function consoleSession(
  options: { env?: Record<string, string>; prepare?: (app: TestApp) => Promise<void>; signIn?: boolean } = {},
): Promise<ConsoleSession> {
  const app = await bootApp(options.env);
  let b: ConsoleBrowser | undefined;
  const close = async () => {
    await b?.browser.close();
    await app.close();
  };
  try {
    await options.prepare?.(app);
    b = await openBrowser(app);
    if (options.signIn !== false) {
      await b.page.goto(`${app.url}/console`);
      await b.page.getByLabel(TOKEN_FIELD).waitFor();
      await signIn(b.page, app.running.adminToken);
    }
    // The same object: the page's handlers keep pushing into its errors and dialogs.
    return Object.assign(b, { app, close });
  } catch (error) {
    await close();
    throw error;
  }
}

/** axe-core on the page as it is now (evaluated through the DevTools protocol, so the CSP stays on). */
export async function accessible(page: Page, name: string): Promise<void> {
  // From the top of the page: scrolled, the sticky header covers whatever passes under it, and
  // axe's target-size rule would count those links as too small to hit.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.evaluate(AXE);
  const violations = await page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<any> } })
      .axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags } });
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map(
      (v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  }, AXE_TAGS);
  assert.deepEqual(violations, [], `${name}: accessibility violations`);
}

/** The page's h1 says `heading`, and nothing is loading any more. */
export async function drawn(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator('main[aria-busy]').waitFor({ state: 'detached' });
}

/**
 * After a filter form is applied on the page it filters: the URL changes at once, but the page
 * is drawn again a moment later (on hashchange), and until then the old results are still there
 * under the same heading. The new ones take the focus once drawn (views/requests.js, audit.js).
 */
export async function filtered(page: Page, url: RegExp): Promise<void> {
  await page.waitForURL(url);
  await page.waitForFunction(() => document.activeElement?.matches('[data-results]'));
  await page.locator('main[aria-busy]').waitFor({ state: 'detached' });
}

export async function go(page: Page, app: TestApp, hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${app.url}/console${hash}`);
  await drawn(page, heading);
}

export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel(TOKEN_FIELD).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Signed in as').waitFor();
}

/**
 * The screen as it is, at a computer's width and a phone's: axe finds nothing, the page is no
 * wider than the window, an id in a table is one line, and on the computer tables fit their box
 * (on a phone they may scroll inside it). With `shot`, a screenshot at each width into
 * SHOTS/console-<shot>-<width>.png. `redraw`: how to draw the screen again at a new width
 * (the charts are drawn for the width they have); by default, the page reloaded.
 */
export async function fits(
  page: Page,
  name: string,
  options: { heading: string | RegExp; shot?: string; redraw?: () => Promise<void> },
): Promise<void> {
  for (const [width, height] of WIDTHS) {
    await page.setViewportSize({ width, height });
    if (options.redraw) await options.redraw();
    else await page.reload();
    await drawn(page, options.heading);
    const { over, tables, ids } = await page.evaluate(() => ({
      over: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      tables: [...document.querySelectorAll('.table-wrap')].map((t) => t.scrollWidth - t.clientWidth),
      ids: [...document.querySelectorAll('td .mono')].map((id) => id.getBoundingClientRect().height),
    }));
    assert.ok(over <= 1, `${name} at ${width}px: the page is ${over}px wider than the window`);
    assert.ok(
      ids.every((h) => h < 30),
      `${name} at ${width}px: ids ${ids.join(', ')}px high`,
    );
    if (width >= 1366)
      assert.ok(
        tables.every((t) => t <= 1),
        `${name} at ${width}px: a table is wider than its box by ${tables.join(', ')}px`,
      );
    await accessible(page, `${name} at ${width}px`);
    if (options.shot) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: path.join(SHOTS, `console-${options.shot}-${width}.png`),
        fullPage: true,
      });
    }
  }
  await page.setViewportSize({ width: 1366, height: 768 });
}
