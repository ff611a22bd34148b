import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { dealerSchema } from '../api/schemas/resources.js';
import { ProblemError } from '../domain/errors.js';
import { firstInvalidUtf8, parseJsonBody } from '../http/json-body.js';
import {
  type Command,
  type Context,
  commonUsage,
  type Group,
  idsForCodes,
  looksLikeId,
  noPositionals,
  oneOf,
  onePositional,
  str,
  type Values,
} from './command.js';
import { CliError, json, keyValues, table, UsageError } from './output.js';

const USAGE = `Usage: forecourt dealers <command> [options]

Commands:
  create --code CODE [fields]       create a dealer profile
  list                              list all dealer profiles
  get ID|CODE                       show one dealer profile
  update ID|CODE [fields]           change only the given fields of a dealer profile
  import FILE.json                  create or update a whole tree by location code, in one transaction;
                                    FILE holds an array of dealers (or {"dealers": [...]}),
                                    each node may nest its "children"

Fields (create and update):
  --code CODE                       location code (unique, case-insensitive)
  --parent ID | --parent-code CODE  parent profile; on update, --parent none makes it a root
  --company-name, --full-name, --display-name, --email, --phone, --address,
  --postal-code, --city, --province, --logo-url TEXT
                                    an empty value ("") clears the field
  --metadata JSON                   a JSON object

${commonUsage()}`;

const TEXT_FIELDS: [option: string, field: keyof Dealer][] = [
  ['company-name', 'companyName'],
  ['full-name', 'fullName'],
  ['display-name', 'displayName'],
  ['email', 'email'],
  ['phone', 'phone'],
  ['address', 'address'],
  ['postal-code', 'postalCode'],
  ['city', 'city'],
  ['province', 'province'],
  ['logo-url', 'logoUrl'],
];

const FIELD_OPTIONS = Object.fromEntries(
  ['code', 'parent', 'parent-code', 'metadata', ...TEXT_FIELDS.map(([option]) => option)].map((name) => [
    name,
    { type: 'string' as const },
  ]),
);

/** A dealer profile as the admin API answers (its response schema). */
type Dealer = z.output<typeof dealerSchema>;

/** The request body from the field options: only those given. */
function dealerBody(values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const code = str(values, 'code');
  if (code !== undefined) body.locationCode = code;
  const parent = oneOf(values, ['parent', 'parent-code']);
  if (parent === 'parent') {
    const id = str(values, 'parent')!;
    body.parentId = id.trim().toLowerCase() === 'none' ? null : id.trim();
  } else if (parent === 'parent-code') {
    body.parentLocationCode = str(values, 'parent-code');
  }
  for (const [option, field] of TEXT_FIELDS) {
    const value = str(values, option);
    if (value !== undefined) body[field] = value.trim() === '' ? null : value;
  }
  const metadata = str(values, 'metadata');
  if (metadata !== undefined) {
    const parsed = readJson(metadata, (why) => new UsageError(`--metadata ${why}`));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError('--metadata must be a JSON object, e.g. {"crm":"A-17"}');
    }
    const number = unkeptNumber(parsed);
    if (number) throw new UsageError(`--metadata ${number}`);
    body.metadata = parsed;
  }
  return body;
}

/** An id as given, or the id of the dealer with this location code. */
async function resolveDealer(ctx: Context, ref: string): Promise<string> {
  if (looksLikeId(ref)) return ref;
  const [id] = await idsForCodes(ctx.client(), [ref]);
  return id!;
}

function showDealer(ctx: Context, dealer: Dealer): void {
  if (ctx.json) {
    ctx.io.out(json(dealer));
    return;
  }
  const parent = dealer.parent ? `${dealer.parent.locationCode} (${dealer.parent.id})` : dealer.parentId;
  ctx.io.out(
    keyValues([
      ['id', dealer.id],
      ['locationCode', dealer.locationCode],
      ['parent', parent],
      ...TEXT_FIELDS.map(([, field]): [string, unknown] => [field, dealer[field]]),
      ['metadata', dealer.metadata && Object.keys(dealer.metadata).length > 0 ? dealer.metadata : null],
    ]),
  );
}

const create: Command = {
  options: FIELD_OPTIONS,
  async run(ctx) {
    noPositionals(ctx.positionals);
    const body = dealerBody(ctx.values);
    if (body.locationCode === undefined) throw new UsageError('--code is required');
    showDealer(ctx, await ctx.client().request<Dealer>('POST', '/dealers', body));
  },
};

const list: Command = {
  options: {},
  async run(ctx) {
    noPositionals(ctx.positionals);
    const dealers = await ctx.client().request<Dealer[]>('GET', '/dealers');
    if (ctx.json) {
      ctx.io.out(json(dealers));
      return;
    }
    const rows = dealers.map((d) => [d.id, d.locationCode, d.displayName, d.parent?.locationCode, d.city]);
    ctx.io.out(
      table(['id', 'locationCode', 'displayName', 'parent', 'city'], rows, 'No dealer profiles yet.'),
    );
  },
};

const get: Command = {
  options: {},
  async run(ctx) {
    const id = await resolveDealer(ctx, onePositional(ctx.positionals, 'dealer id or location code'));
    showDealer(ctx, await ctx.client().request<Dealer>('GET', `/dealers/${encodeURIComponent(id)}`));
  },
};

const update: Command = {
  options: FIELD_OPTIONS,
  async run(ctx) {
    const ref = onePositional(ctx.positionals, 'dealer id or location code');
    const body = dealerBody(ctx.values);
    if (Object.keys(body).length === 0) throw new UsageError('nothing to update: give at least one field');
    const id = await resolveDealer(ctx, ref);
    showDealer(ctx, await ctx.client().request<Dealer>('PATCH', `/dealers/${encodeURIComponent(id)}`, body));
  },
};

/** The dealers of an import file: an array of nodes, or an object with a "dealers" array. */
function readImportFile(file: string): unknown[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  // UTF-8 without its byte order mark (Windows Notepad writes one; JSON.parse would report a
  // character nobody can see), and never a U+FFFD in place of a byte that is not UTF-8.
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  if (!isUtf8(bytes.subarray(start))) {
    const at = start + firstInvalidUtf8(bytes.subarray(start));
    throw new CliError(
      `${file} is not UTF-8: byte 0x${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')} at offset ${at}; convert it to UTF-8`,
    );
  }
  const text = bytes.subarray(start).toString('utf8');
  const parsed = readJson(text, (why) => new CliError(`${file} ${why}`));
  const dealers = Array.isArray(parsed) ? parsed : (parsed as { dealers?: unknown } | null)?.dealers;
  if (!Array.isArray(dealers)) {
    throw new CliError(`${file} must hold an array of dealers, or an object {"dealers": [...]}`);
  }
  if (dealers.length === 0) throw new CliError(`${file} holds no dealers`);
  const number = unkeptNumber(dealers);
  if (number) throw new CliError(`${file}: ${number}`);
  return dealers;
}

/**
 * JSON read as the service reads a body (src/http/json-body.ts): what it would refuse, a number a
 * double would not keep as sent (1e-400 would be sent as 0) among them, is said here, before
 * anything is sent. `refuse` makes the error from what is wrong ("is not valid JSON: …").
 */
function readJson(text: string, refuse: (why: string) => Error): unknown {
  let value: unknown;
  try {
    value = parseJsonBody('application/json', Buffer.from(text, 'utf8'));
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    const issue = error.issues?.[0];
    throw refuse(
      issue ? `at ${issue.path}: ${issue.message}` : error.message.replace(/^The request body /, ''),
    );
  }
  if (value === undefined) throw refuse('is empty');
  return value;
}

/**
 * A whole number past 2^53 that readJson took (written as its double writes it: 1e20,
 * 18446744073709552000): said here, before anything is sent, as the service refuses such numbers
 * in metadata (src/domain/shapes/admin-fields.ts).
 */
function unkeptNumber(value: unknown): string | undefined {
  const stack = [value];
  while (stack.length) {
    const item = stack.pop();
    if (typeof item === 'number' && Number.isInteger(item) && !Number.isSafeInteger(item))
      return `holds a whole number past ±${Number.MAX_SAFE_INTEGER} (${item}); send larger ones as strings`;
    if (item !== null && typeof item === 'object') stack.push(...Object.values(item));
  }
  return undefined;
}

const importTree: Command = {
  options: {},
  async run(ctx) {
    const file = onePositional(ctx.positionals, 'file to import (FILE.json)');
    const dealers = readImportFile(file);
    const result = await ctx
      .client()
      .request<{ created: number; updated: number; unchanged: number; dealers: Dealer[] }>(
        'POST',
        '/dealers/import',
        {
          dealers,
        },
      );
    if (ctx.json) {
      ctx.io.out(json(result));
      return;
    }
    ctx.io.out(
      `Imported ${file}: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged.\n`,
    );
  },
};

export const dealerCommands: Group = {
  usage: USAGE,
  commands: { create, list, get, update, import: importTree },
};
