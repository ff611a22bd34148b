import type { ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import type { dealerSchema } from '../api/schemas/resources.js';
import type { AdminClient } from './admin-client.js';
import { CliError, type Io, UsageError } from './output.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** What a command gets: its parsed arguments, where to write, and the admin API client. */
export interface Context {
  values: Values;
  positionals: string[];
  io: Io;
  /** --json: print the `data` of the response as JSON, nothing else on stdout. */
  json: boolean;
  /** Resolved on first use, so that usage errors are reported before a missing token. */
  client(): AdminClient;
}

export interface Command {
  options: Options;
  run(ctx: Context): Promise<void>;
}

export interface Group {
  usage: string;
  commands: Record<string, Command>;
}

export function str(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The one positional argument a command takes (an id, a file), or a usage error. */
export function onePositional(positionals: string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${what}`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  return positionals[0]!;
}

export function noPositionals(positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
}

/** `a,b , c` → ['a', 'b', 'c']; an empty list is a usage error. */
export function list(value: string, option: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${option} needs at least one value`);
  return items;
}

/** At most one of the given options; returns the one that was given, if any. */
export function oneOf(values: Values, names: string[]): string | undefined {
  const given = names.filter((name) => values[name] !== undefined && values[name] !== false);
  if (given.length > 1) throw new UsageError(`use only one of ${given.map((n) => `--${n}`).join(', ')}`);
  return given[0];
}

export function integer(value: string, option: string, min: number): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${option} must be a whole number of at least ${min} (got "${value}")`);
  }
  return Number(value);
}

/** What the CLI needs of a dealer to show or find it by its code. */
export type DealerRef = Pick<z.output<typeof dealerSchema>, 'id' | 'locationCode'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const looksLikeId = (value: string): boolean => UUID.test(value);

/** Dealer ids by location code (case-insensitive); fails naming every code that is not known. */
export async function idsForCodes(client: AdminClient, codes: string[]): Promise<string[]> {
  const dealers = await client.request<DealerRef[]>('GET', '/dealers');
  const byCode = new Map(dealers.map((d) => [d.locationCode.toLowerCase(), d.id]));
  const unknown = codes.filter((code) => !byCode.has(code.toLowerCase()));
  if (unknown.length > 0) {
    const quoted = unknown.map((c) => `"${c}"`).join(', ');
    const noun = unknown.length > 1 ? 'codes' : 'code';
    throw new CliError(`no dealer profile has the location ${noun} ${quoted} (see: forecourt dealers list)`);
  }
  return codes.map((code) => byCode.get(code.toLowerCase())!);
}

/** The options every admin command takes, for the end of each group's usage text. */
export function commonUsage(json = 'print the response data as JSON'): string {
  return `Common options:
  --url URL       the service (default: $FORECOURT_URL, else https://localhost:$PORT, PORT 8443)
  --token TOKEN   an operator token, or the admin token (default: $ADMIN_TOKEN, else <DATA_DIR>/admin-token)
  --ca FILE       trust this CA certificate (default: <DATA_DIR>/tls/localhost-cert.pem if present)
  --insecure      do not verify the service's TLS certificate
  --json          ${json}
  -h, --help      show this help
`;
}
