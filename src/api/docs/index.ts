import swaggerUi, { type FastifySwaggerUiConfigOptions } from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';
import { PARTNER_PREFIX } from '../openapi/document.js';
import { GUIDES_PREFIX, guidePages } from './guides.js';

/** Where the reference page lives; its assets are under `${DOCS_PREFIX}/static/`. */
const DOCS_PREFIX = '/docs';

/**
 * Content-Security-Policy of the page and its assets. Everything comes from this service: the
 * Swagger UI bundle, CSS and favicons ship inside @fastify/swagger-ui (swagger-ui-dist), and
 * "Try it out" calls this same origin. So a partner behind a closed network sees a whole page, and
 * nothing on the page (an injected script, a description's markdown) can talk to another host.
 * `data:` images only: swagger-ui.css draws its icons as inline SVG data URIs.
 */
export const DOCS_CSP: Readonly<Record<string, string>> = {
  'default-src': "'self'",
  'base-uri': "'self'",
  'connect-src': "'self'",
  'font-src': "'self'",
  'form-action': "'self'",
  // The page holds an API secret: no other site may frame it and trick a click.
  'frame-ancestors': "'none'",
  'img-src': "'self' data:",
  'object-src': "'none'",
  'script-src': "'self'",
  'script-src-attr': "'none'",
  'style-src': "'self'",
};

/** Shown under the title on the page only; docs/openapi.json stays the bare contract. */
const PAGE_NOTE = [
  '',
  '---',
  '',
  '**Using this page.** Click **Authorize**, paste your API secret under `bearerAuth` and close the',
  'dialog; then open an operation and press **Execute**. Requests go to this service with your',
  'secret and act on real data. The page keeps the secret in this browser until you press **Logout**.',
  '',
  `**Guides**: [partner guide](${GUIDES_PREFIX}/partner-guide) (authentication, first calls, scopes,`,
  'writing one listing, bulk import, a feed file, keeping in sync, every error and what to do) ·',
  `[API overview](${GUIDES_PREFIX}/api) · [keeping in sync](${GUIDES_PREFIX}/sync) ·`,
  `[client package](${GUIDES_PREFIX}/client) · [importing a feed](${GUIDES_PREFIX}/import).`,
  `Machine-readable document: [openapi.json](${PARTNER_PREFIX}/openapi.json).`,
].join('\n');

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is walked by key
type Json = Record<string, any>;

/**
 * The page's copy of the document: aliases (page_size, updated_since, userId, …) are accepted and
 * stay in openapi.json for gateways and generated clients, but as inputs on the page they would
 * double every form (about 20 on GET /listings). They are listed in the operation's text instead.
 */
function withoutAliasInputs(document: Json): Json {
  const paths: Json = {};
  for (const [template, item] of Object.entries<Json>(document.paths ?? {})) {
    paths[template] = {};
    for (const [method, operation] of Object.entries<Json>(item)) {
      const params: Json[] = operation.parameters ?? [];
      const aliasOf = (p: Json) => /^Alias of `?([A-Za-z_]+)`?\./.exec(p.description ?? '')?.[1];
      const aliases = params.filter((p) => aliasOf(p)).map((p) => `\`${p.name}\` → \`${aliasOf(p)}\``);
      paths[template][method] = aliases.length
        ? {
            ...operation,
            parameters: params.filter((p) => !aliasOf(p)),
            description: [operation.description, `Also accepted, under other names: ${aliases.join(', ')}.`]
              .filter(Boolean)
              .join('\n\n'),
          }
        : operation;
    }
  }
  return { ...document, paths };
}

/**
 * Swagger UI settings for a partner's first hour. (`requestSnippetsEnabled`, the curl snippets of a
 * request, is a Swagger UI 5 option the plugin's types do not list yet.)
 */
const uiConfig: FastifySwaggerUiConfigOptions & { requestSnippetsEnabled: boolean } = {
  // The document's info block already names the API; the top bar would add a URL box that
  // invites loading other documents (which the CSP blocks anyway).
  layout: 'BaseLayout',
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  requestSnippetsEnabled: true,
  filter: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  // Swagger UI's default shows a badge image fetched from validator.swagger.io: another host.
  validatorUrl: null,
};

/**
 * GET /docs: the interactive reference (Swagger UI) of the partner document, the very one
 * GET /api/external/v1/openapi.json serves (Swagger UI loads it from /docs/json; its `servers`
 * entry sends "Try it out" to /api/external/v1). Public, like the document itself.
 */
export const docsPage: FastifyPluginAsync = async (app) => {
  const csp = Object.entries(DOCS_CSP)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
  await app.register(guidePages, { csp });
  // Swagger UI's onSend hook sets the CSP on its own routes; these two go with it, for the same routes.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'no-referrer');
  });

  let pageDocument: Record<string, unknown> | undefined;
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: DOCS_CSP as Record<string, string>,
    theme: { title: 'Forecourt partner API reference' },
    uiConfig,
    // Same document, one note added to info.description; built once (fastify.swagger() is cached).
    transformSpecificationClone: false,
    transformSpecification: (document) => {
      if (!pageDocument) {
        const info = document.info as { description?: string };
        pageDocument = withoutAliasInputs({
          ...document,
          info: { ...info, description: `${info.description ?? ''}\n${PAGE_NOTE}` },
        });
      }
      return pageDocument;
    },
  });
};
