import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Reply } from './app.js';

/**
 * Contract check of every partner-API response the test suites receive: the status must be one
 * the OpenAPI document lists for that operation, and the body must match its schema exactly
 * (every object in the document is closed, so an undocumented field fails too). The document is
 * the committed docs/openapi.json; test/openapi.test.ts keeps it equal to what the service serves.
 * An error's code must be one the response lists for that status.
 */
const PREFIX = '/api/external/v1';
type Json = Record<string, any>;

const document: Json = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../docs/openapi.json'), 'utf8'),
);
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');

// Literal paths first: /listings/bulk-upsert is not /listings/{listing}.
const templates = Object.keys(document.paths)
  .map((template) => ({
    template,
    params: template.split('{').length,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);
const validators = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: Json): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    // Component references point into the document registered above.
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
    validate = ajv.compile(rebased);
    validators.set(key, validate);
  }
  return validate;
}

/** Throws, naming the operation and what differs, when a reply breaks the document. */
export function assertContract(method: string, urlPath: string, reply: Reply): void {
  const pathname = new URL(urlPath, 'https://x').pathname;
  if (!pathname.startsWith(`${PREFIX}/`) || pathname === `${PREFIX}/openapi.json`) return;
  // A trailing slash names the same resource (docs/contract.md#paths-and-methods).
  const relative = pathname.slice(PREFIX.length).replace(/(.)\/$/, '$1');
  const where = `${method} ${urlPath} → ${reply.status}`;
  // The router's choice: the literal path when it has this method, else a parametric one
  // (GET /listings/bulk-upsert is GET /listings/{listing}).
  const candidates = templates.filter((t) => t.pattern.test(relative));
  const matched = candidates.find((t) => document.paths[t.template][method.toLowerCase()]) ?? candidates[0];
  const operation: Json | undefined = matched && document.paths[matched.template][method.toLowerCase()];
  if (!operation) {
    // No operation here: an unknown path (404) or a wrong method (405), in the error envelope.
    if (reply.status !== 404 && reply.status !== 405) {
      throw new Error(`Contract: ${where}: no operation in the OpenAPI document for this request`);
    }
    check(`error ${reply.status}`, { $ref: '#/components/schemas/ErrorResponse' }, where, reply);
    checkCode(reply.status === 404 ? ['NOT_FOUND'] : ['METHOD_NOT_ALLOWED'], where, reply);
    return;
  }
  const response: Json | undefined = operation.responses[String(reply.status)];
  if (!response) {
    throw new Error(
      `Contract: ${where}: status ${reply.status} is not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')}); body: ${reply.text.slice(0, 300)}`,
    );
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema) {
    if (reply.text !== '') throw new Error(`Contract: ${where}: a body where the document has none`);
    return;
  }
  check(`${operation.operationId} ${reply.status}`, schema, where, reply);
  if (reply.status >= 400) {
    const listed = [...String(response.description).matchAll(/`([A-Z_]+)`: /g)].map((m) => m[1]!);
    checkCode(listed, where, reply);
  }
}

/** An error's code must be one the document lists for its status: a code never travels with two. */
function checkCode(listed: string[], where: string, reply: Reply): void {
  const code = (reply.body as { error?: { code?: string } }).error?.code;
  if (!code || !listed.includes(code)) {
    throw new Error(
      `Contract: ${where}: code ${code} is not one the document lists for this status (${listed.join(', ')})`,
    );
  }
}

function check(key: string, schema: Json, where: string, reply: Reply): void {
  const validate = validatorFor(key, schema);
  if (reply.body === undefined)
    throw new Error(`Contract: ${where}: the body is not JSON: ${reply.text.slice(0, 200)}`);
  if (!validate(reply.body)) {
    const errors = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`)
      .join('; ');
    throw new Error(`Contract: ${where}: the body does not match the document: ${errors}`);
  }
}
