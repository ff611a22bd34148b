import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Request } from 'playwright-core';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp, unique } from './helpers/app.js';
import { assertContract } from './helpers/contract.js';
import { putListing } from './helpers/listings-api.js';

/**
 * The interactive reference at /docs, in a real browser: Debian's Chromium driven by
 * playwright-core, against the real service over HTTPS with its self-signed certificate.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = path.resolve(import.meta.dirname, '..', 'test-results', 'docs-page.png');
/** Where the page's screenshots go (the ones judged and kept are in docs/screenshots/). */
const SHOTS = path.dirname(SCREENSHOT);

let app: TestApp;
let secret: string;
const titles = ['Docs Page Škoda Octavia Combi', 'Docs Page Toyota Yaris Hybrid'];
let references: string[];

before(async () => {
  app = await bootApp();
  const tree = await createTree(app);
  // Listings are written by one partner and read on the page by another with read scopes only,
  // the secret a partner would paste on its first visit.
  const writer = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'write:listings'],
  });
  secret = (await createPartner(app, { roots: [tree.ids.A!], scopes: ['read:listings', 'read:locations'] }))
    .secret;
  references = titles.map(() => unique('docs-page'));
  for (const [i, reference] of references.entries()) {
    await putListing(app, writer.secret, reference, listingBody({ title: titles[i] }));
  }
});
after(() => app.close());

describe('GET /docs over HTTP', () => {
  test('page, assets and document are public and carry a CSP that allows this origin only', async () => {
    for (const url of ['/docs', '/docs/', '/docs/json', '/docs/static/swagger-ui-bundle.js']) {
      const res = await app.call('GET', url);
      assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 200)}`);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      const csp = String(res.headers['content-security-policy'] ?? '');
      const directives = new Map(
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .filter((d) => d[0])
          .map(([name, ...sources]) => [name!, sources]),
      );
      for (const name of ['default-src', 'script-src', 'style-src', 'connect-src', 'font-src', 'img-src']) {
        assert.ok(directives.has(name), `${url}: CSP has no ${name}: ${csp}`);
      }
      for (const [name, sources] of directives) {
        // Icons in swagger-ui.css are data: URIs; nothing else may come from anywhere but here.
        const allowed = name === 'img-src' ? ["'self'", 'data:'] : ["'self'", "'none'"];
        for (const source of sources) assert.ok(allowed.includes(source), `${url}: ${name} allows ${source}`);
      }
      assert.deepEqual(directives.get('frame-ancestors'), ["'none'"], url);
    }
  });

  test('the page shows the partner document: /docs/json is /api/external/v1/openapi.json, a note added, aliases as text', async () => {
    const page = (await app.call('GET', '/docs/json')).body;
    const partner = (await app.call('GET', `${EXT}/openapi.json`)).body;
    assert.ok(page.info.description.startsWith(partner.info.description));
    assert.match(page.info.description, /Using this page[\s\S]*\/docs\/guides\/partner-guide/);
    assert.deepEqual({ ...page, info: null, paths: null }, { ...partner, info: null, paths: null });
    assert.deepEqual(page.servers, [{ url: EXT, description: 'This service' }]);
    // Aliases stay in the document (gateways must accept them) but are not inputs on the page.
    const names = (doc: any) => doc.paths['/listings'].get.parameters.map((p: { name: string }) => p.name);
    assert.ok(names(partner).includes('page_size') && names(partner).includes('pageSize'));
    assert.ok(!names(page).includes('page_size') && names(page).includes('pageSize'), names(page).join(', '));
    assert.match(
      page.paths['/listings'].get.description,
      /Also accepted, under other names: .*`page_size` → `pageSize`/,
    );
    const listed = Object.values<any>(page.paths)
      .flatMap((item) => Object.values<any>(item))
      .map((op) => op.tags.length);
    assert.ok(
      listed.every((n) => n === 1),
      'an operation with two tags is listed twice on the page',
    );
  });

  test('every response carries real examples; an error example carries its own code', async () => {
    const partner = (await app.call('GET', `${EXT}/openapi.json`)).body;
    for (const [template, item] of Object.entries<any>(partner.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          const examples = response.content?.['application/json']?.examples;
          if (!response.content) continue;
          assert.ok(
            examples && Object.keys(examples).length > 0,
            `${method} ${template} ${status}: no example`,
          );
          if (Number(status) < 400) continue;
          for (const [name, example] of Object.entries<any>(examples)) {
            assert.equal(example.value.error.code, name, `${method} ${template} ${status}: ${name}`);
          }
        }
      }
    }
    assert.ok(!JSON.stringify(partner).includes('-9007199254740991'));
  });

  test('the partner guides are served as pages whose links work', async () => {
    const pages = ['partner-guide', 'api', 'sync', 'client', 'import'];
    const ids = new Map<string, Set<string>>();
    const links: { from: string; href: string }[] = [];
    for (const slug of pages) {
      const res = await app.call('GET', `/docs/guides/${slug}`);
      assert.equal(res.status, 200, slug);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
      ids.set(slug, new Set([...res.text.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!)));
      for (const m of res.text.matchAll(/ href="([^"]+)"/g)) links.push({ from: slug, href: m[1]! });
    }
    assert.match((await app.call('GET', '/docs/guides/partner-guide')).text, /<h1 id="[^"]+">/);
    let checked = 0;
    for (const { from, href } of links) {
      if (/^https?:/.test(href)) continue;
      const [target = '', anchor] = href.split('#');
      if (target === '') {
        assert.ok(ids.get(from)!.has(anchor!), `${from}: #${anchor} has no heading`);
        continue;
      }
      const res = await app.call('GET', target);
      assert.equal(res.status, 200, `${from}: ${href}`);
      const slug = target.replace('/docs/guides/', '');
      if (anchor && ids.has(slug))
        assert.ok(ids.get(slug)!.has(anchor), `${from}: ${href} has no such heading`);
      checked++;
    }
    assert.ok(checked > 5, `only ${checked} links`);
  });
});

describe('GET /docs in headless Chromium', () => {
  let browser: Browser | undefined;
  after(() => browser?.close());

  test('lists the endpoints, authorizes with a secret, executes GET /listings, loads nothing from elsewhere', async () => {
    assert.ok(
      existsSync(CHROMIUM),
      `no Chromium at ${CHROMIUM}: npm test installs Debian's chromium package when run as root ` +
        '(apt-get install --no-install-recommends chromium); elsewhere set CHROMIUM_PATH',
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const origin = new URL(app.url).origin;
    // The certificate is the service's self-signed one, as on a partner's first `npm run demo`.
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 1000 },
    });
    // Generous: on CI this page loads while another test pass shares the two cores.
    context.setDefaultTimeout(30_000);

    // Every request the page makes is recorded; one to another host is also aborted, so the
    // test reports it rather than waiting on a network this machine may not have.
    const requests: Request[] = [];
    const failures: string[] = [];
    /** Favicons Chromium cancelled when the page moved on: no answer to judge. */
    const cancelled = new Set<Request>();
    context.on('request', (request) => requests.push(request));
    context.on('requestfailed', (r) => {
      // Chromium cancels a favicon still loading when the page moves on (net::ERR_ABORTED): the
      // browser's choice, not a request the service failed. Every other failure counts.
      if (r.failure()?.errorText === 'net::ERR_ABORTED' && /favicon/.test(r.url())) {
        cancelled.add(r);
        return;
      }
      failures.push(`${r.url()}: ${r.failure()?.errorText}`);
    });
    await context.route(
      (url) => url.origin !== origin,
      (route) => route.abort('blockedbyclient'),
    );
    // CSP violations, whether or not the browser also logs them to the console.
    await context.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (e) =>
        seen.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));

    const started = Date.now();
    await page.goto(`${app.url}/docs`);
    const summaries = page.locator('.opblock-summary');
    await summaries.nth(8).waitFor();
    const listed = (await summaries.allInnerTexts()).map((s) => s.split('\n').slice(0, 2).join(' '));
    for (const operation of [
      'GET /listings',
      'GET /listings/{listing}',
      'PUT /listings/{listing}',
      'DELETE /listings/{listing}',
      'POST /listings/bulk-upsert',
      'GET /locations',
      'GET /reference/enums',
    ]) {
      assert.ok(listed.includes(operation), `${operation} not on the page; listed: ${listed.join(', ')}`);
    }
    assert.ok(!listed.some((s) => /dealers|partners|audit|openapi\.json|healthz/.test(s)), listed.join(', '));
    const loadMs = Date.now() - started;
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'docs-overview.png') });

    // Authorize: the secret goes into the bearer scheme, as the page's note says.
    await page.locator('.auth-wrapper button.authorize').click();
    const bearer = page.locator('.auth-container', { hasText: 'bearerAuth' });
    await bearer.locator('input[aria-label="auth-bearer-value"]').fill(secret);
    await bearer.locator('button[type="submit"]').click();
    await bearer.locator('button', { hasText: 'Logout' }).waitFor();
    await page.locator('.dialog-ux .modal-ux-header button.close-modal').click();
    assert.match((await page.evaluate(() => localStorage.getItem('authorized'))) ?? '', /bearerAuth/);

    // GET /listings: deep link in the address bar; Execute straight away (tryItOutEnabled).
    const operation = page.locator('#operations-Listings-listListings');
    await operation.locator('.opblock-summary-control').click();
    await page.waitForURL(/#\/Listings\/listListings$/);
    const apiCall = page.waitForResponse((r) => new URL(r.url()).pathname === `${EXT}/listings`);
    await operation.locator('button.execute').click();
    const response = await apiCall;

    // What went over the wire: the secret as a bearer token, a 200 the contract allows.
    assert.equal(response.request().headers().authorization, `Bearer ${secret}`);
    const text = await response.text();
    assertContract('GET', `${EXT}/listings`, {
      status: response.status(),
      headers: response.headers(),
      body: JSON.parse(text),
      text,
    });
    assert.equal(response.status(), 200, text);

    // What the page shows: the status, the listings' data, the request URL and duration.
    const live = operation.locator('.live-responses-table');
    await live.locator('.response-col_status', { hasText: '200' }).waitFor();
    const shown = await live.innerText();
    for (const value of [...titles, ...references]) assert.ok(shown.includes(value), `page lacks ${value}`);
    const requestUrl = await operation.locator('.request-url').innerText();
    assert.ok(requestUrl.includes(`${origin}${EXT}/listings`), requestUrl);
    await operation.getByText('Request duration').waitFor();

    await live.scrollIntoViewIfNeeded();
    await operation.scrollIntoViewIfNeeded();
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });

    // The inputs: one per parameter, no aliases; the documented answers show real examples.
    const inputs = await operation
      .locator('.parameters tr[data-param-name]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-param-name')));
    assert.ok(
      inputs.includes('pageSize') && !inputs.includes('page_size') && !inputs.includes('limit'),
      inputs.join(', '),
    );
    const documented = await operation.locator('.responses-wrapper').innerText();
    assert.ok(
      documented.includes('Volkswagen Golf 1.5 TSI Life 2021'),
      'the 200 example is not the real one',
    );
    assert.ok(!documented.includes('-9007199254740991'));
    await operation.locator('.responses-wrapper tr.response[data-code="400"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'docs-operation-errors.png') });

    // A partner guide page, reached from the note at the top of the reference.
    await page.goto(`${app.url}/docs`);
    const guide = await page.locator('.info a', { hasText: 'partner guide' }).getAttribute('href');
    assert.equal(guide, '/docs/guides/partner-guide');
    await page.goto(`${app.url}${guide}`);
    await page.locator('main h1').waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'docs-partner-guide.png') });

    const foreign = requests.map((r) => r.url()).filter((url) => new URL(url).origin !== origin);
    assert.deepEqual(foreign, [], 'the page requested another host');
    assert.deepEqual(failures, [], 'requests failed');
    const statuses = await Promise.all(
      requests
        .filter((r) => !cancelled.has(r))
        .map(async (r) => `${(await r.response())?.status()} ${r.url()}`),
    );
    assert.ok(
      statuses.every((s) => /^[23]\d\d /.test(s)),
      statuses.join('\n'),
    );
    assert.deepEqual(
      await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations),
      [],
    );
    assert.deepEqual(errors, [], 'console errors');
    console.log(`# /docs: ${requests.length} requests, endpoints listed after ${loadMs} ms`);
  });
});
