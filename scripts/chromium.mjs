// The browser tests (the reference page, the operator's console) drive Debian's Chromium through
// playwright-core, which downloads no browser of its own (this workplace's machines reach no
// browser download site). `npm test` must pass on a fresh machine as the README prints it, so the
// run installs Debian's package itself when it is missing and it can: as root, with apt-get.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The files that open a browser: the run makes sure Chromium is there before it starts them. */
export const BROWSER_TESTS = [
  'test/docs-page.test.ts',
  'test/console.test.ts',
  'test/console-first-day.test.ts',
  'test/console-attention.test.ts',
  'test/console-details.test.ts',
  'test/console-move-preview.test.ts',
  'test/console-names.test.ts',
  'test/console-one-time-secret.test.ts',
  'test/console-rotation.test.ts',
  'test/console-webhook-triage.test.ts',
];

export const chromiumPath = () => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Resolves when Chromium is at `chromiumPath()`. Installs Debian's `chromium` when it is not and
 * this process may (root, apt-get present); otherwise says what to do. Never throws: a run without
 * a browser still runs, and the browser tests then fail saying why.
 */
export function ensureChromium() {
  const where = chromiumPath();
  if (existsSync(where)) return true;
  const isRoot = process.getuid?.() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (process.env.CHROMIUM_PATH || !isRoot || !hasApt) {
    console.error(
      `# no Chromium at ${where}: the browser tests will fail. Install Debian's chromium package ` +
        '(apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary.',
    );
    return false;
  }
  console.log("# the browser tests need Chromium: installing Debian's chromium package (once per machine)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) =>
    spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  const installed =
    apt(['update', '-qq']) &&
    apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium']) &&
    existsSync(where);
  console.log(installed ? `# Chromium installed at ${where}` : '# installing chromium failed: see above');
  return installed;
}
