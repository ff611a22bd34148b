import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { Marked, type Tokens } from 'marked';
import { PARTNER_PREFIX } from '../openapi/document.js';

/**
 * The partner docs of the repository (docs/*.md), served as pages next to the reference, so a
 * partner who has only the service's address has the guide too, with working links between them.
 */
export const GUIDES_PREFIX = '/docs/guides';

const GUIDES = [
  { slug: 'partner-guide', file: 'partner-guide.md', title: 'Partner guide' },
  { slug: 'api', file: 'api.md', title: 'API overview' },
  { slug: 'sync', file: 'sync.md', title: 'Keeping in sync' },
  { slug: 'webhooks', file: 'webhooks.md', title: 'Webhooks' },
  { slug: 'client', file: 'client.md', title: 'Client package' },
  { slug: 'import', file: 'import.md', title: 'Importing a feed' },
] as const;

const DOCS_DIR = path.resolve(import.meta.dirname, '../../../docs');
const BY_FILE = new Map<string, string>(GUIDES.map((g) => [g.file, g.slug]));

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** GitHub's heading anchors ("## 7. Import a feed file" → 7-import-a-feed-file), so links keep working. */
function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/**
 * Where a link of a doc goes on the service: another guide → its page; the OpenAPI document and
 * the reference → theirs; the web → unchanged. A path of the repository that the service does not
 * serve (../examples/…) → undefined: shown as text, not as a link that would 404.
 */
function linkTarget(href: string): string | undefined {
  if (/^(https?:|mailto:)/i.test(href)) return href;
  if (href.startsWith('#')) return href;
  const [file = '', anchor] = href.split('#');
  const name = path.posix.basename(file);
  const slug = BY_FILE.get(name);
  if (slug && !file.includes('..')) return `${GUIDES_PREFIX}/${slug}${anchor ? `#${anchor}` : ''}`;
  if (name === 'openapi.json') return `${PARTNER_PREFIX}/openapi.json`;
  if (href === '/docs' || href.startsWith('/docs#')) return href;
  return undefined;
}

function renderer() {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      heading({ tokens, depth }: Tokens.Heading) {
        const inner = this.parser.parseInline(tokens);
        return `<h${depth} id="${escapeHtml(headingId(inner))}">${inner}</h${depth}>\n`;
      },
      link({ href, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens);
        const target = linkTarget(href);
        if (!target)
          return `<span class="repo-path" title="${escapeHtml(`${href} in the Forecourt repository`)}">${inner}</span>`;
        const external = /^https?:/i.test(target);
        return `<a href="${escapeHtml(target)}"${external ? ' rel="noopener noreferrer"' : ''}>${inner}</a>`;
      },
      // The docs are ours, but raw HTML in them is shown, never run.
      html({ text }: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(text);
      },
    },
  });
  return marked;
}

function page(title: string, body: string, current: string): string {
  const nav = [
    `<a href="/docs"${current === 'reference' ? ' aria-current="page"' : ''}>API reference</a>`,
    ...GUIDES.map(
      (g) =>
        `<a href="${GUIDES_PREFIX}/${g.slug}"${current === g.slug ? ' aria-current="page"' : ''}>${g.title}</a>`,
    ),
    `<a href="${PARTNER_PREFIX}/openapi.json">openapi.json</a>`,
  ].join('\n      ');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)} · Forecourt partner API</title>
    <link rel="stylesheet" href="${GUIDES_PREFIX}/style.css">
  </head>
  <body>
    <nav>
      <strong>Forecourt partner API</strong>
      ${nav}
    </nav>
    <main>
${body}
    </main>
  </body>
</html>
`;
}

const STYLE = `
:root { color-scheme: light; --ink: #1f2933; --muted: #52606d; --line: #d9e2ec; --accent: #0b6bcb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); }
nav { position: sticky; top: 0; display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; align-items: baseline;
  padding: 0.8rem 1.5rem; background: #f5f7fa; border-bottom: 1px solid var(--line); }
nav strong { margin-right: 1rem; }
nav a { color: var(--muted); text-decoration: none; }
nav a[aria-current="page"], nav a:hover { color: var(--accent); text-decoration: underline; }
main { max-width: 52rem; margin: 0 auto; padding: 1.5rem 1.5rem 4rem; }
h1, h2, h3 { line-height: 1.25; margin-top: 2rem; }
h1 { margin-top: 0.5rem; }
a { color: var(--accent); }
code { font: 0.9em ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; background: #f0f4f8; padding: 0.1em 0.3em; border-radius: 3px; }
pre { background: #0f1720; color: #e4e7eb; padding: 1rem; border-radius: 6px; overflow-x: auto; }
pre code { background: none; padding: 0; color: inherit; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 0.4rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f5f7fa; }
.repo-path { border-bottom: 1px dotted var(--muted); }
blockquote { margin: 0; padding-left: 1rem; border-left: 3px solid var(--line); color: var(--muted); }
`;

/** GET /docs/guides/<slug>: each partner doc as a page; rendered once, at the first request. */
export const guidePages: FastifyPluginAsync<{ csp: string }> = async (app, { csp }) => {
  const rendered = new Map<string, string>();
  const marked = renderer();
  const headers = {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
  app.get(`${GUIDES_PREFIX}/style.css`, { schema: { hide: true } }, async (_request, reply) =>
    reply.headers(headers).type('text/css; charset=utf-8').send(STYLE),
  );
  for (const guide of GUIDES) {
    // An image built without docs/ answers 404 for the guide, not 500 at the first visit.
    if (!existsSync(path.join(DOCS_DIR, guide.file))) continue;
    app.get(`${GUIDES_PREFIX}/${guide.slug}`, { schema: { hide: true } }, async (_request, reply) => {
      let html = rendered.get(guide.slug);
      if (!html) {
        const markdown = readFileSync(path.join(DOCS_DIR, guide.file), 'utf8');
        html = page(guide.title, await marked.parse(markdown), guide.slug);
        rendered.set(guide.slug, html);
      }
      return reply.headers(headers).type('text/html; charset=utf-8').send(html);
    });
  }
  app.get(GUIDES_PREFIX, { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect(`${GUIDES_PREFIX}/partner-guide`),
  );
};
