import { parseArgs } from 'node:util';
import { AdminClient, ApiError } from './admin-client.js';
import { auditCommands } from './audit-commands.js';
import type { Context, Group, Options, Values } from './command.js';
import { dealerCommands } from './dealer-commands.js';
import { operatorCommands } from './operator-commands.js';
import { CliError, clean, type Io, processIo, UsageError } from './output.js';
import { partnerCommands } from './partner-commands.js';
import { requestCommands } from './request-commands.js';
import { webhookCommands } from './webhook-commands.js';

const GROUPS: Record<AdminGroup, Group> = {
  dealers: dealerCommands,
  partners: partnerCommands,
  'audit-log': auditCommands,
  webhooks: webhookCommands,
  operators: operatorCommands,
  requests: requestCommands,
};

export type AdminGroup = 'dealers' | 'partners' | 'audit-log' | 'webhooks' | 'operators' | 'requests';

const COMMON: Options = {
  url: { type: 'string' },
  token: { type: 'string' },
  ca: { type: 'string' },
  insecure: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const HELP = new Set(['-h', '--help', 'help']);

/**
 * `forecourt dealers …` and `forecourt partners …`: the operator's client for the admin API of a
 * running service, over HTTPS. Returns the exit code: 0 done, 1 failed, 2 bad command line.
 */
export async function runAdminCommand(
  group: AdminGroup,
  args: string[],
  env: Record<string, string | undefined>,
  io: Io = processIo,
): Promise<number> {
  const { usage, commands } = GROUPS[group];
  const [name, ...rest] = args;
  if (name !== undefined && HELP.has(name)) {
    io.out(usage);
    return 0;
  }
  const command = name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.err(
      `${name === undefined ? `forecourt ${group}: missing command` : `forecourt ${group}: unknown command "${name}"`}\n\n${usage}`,
    );
    return 2;
  }
  try {
    let parsed: { values: Values; positionals: string[] };
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...COMMON, ...command.options },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
        throw new UsageError((error as Error).message);
      throw error;
    }
    const { values, positionals } = parsed;
    if (values.help === true) {
      io.out(usage);
      return 0;
    }
    let client: AdminClient | undefined;
    const ctx: Context = {
      values,
      positionals,
      io,
      json: values.json === true,
      client: () => {
        client ??= AdminClient.resolve(
          {
            url: values.url as string | undefined,
            token: values.token as string | undefined,
            ca: values.ca as string | undefined,
            insecure: values.insecure === true,
          },
          env,
        );
        return client;
      },
    };
    await command.run(ctx);
    return 0;
  } catch (error) {
    return report(error, `${group} ${name}`, usage, io);
  }
}

function report(error: unknown, command: string, usage: string, io: Io): number {
  if (error instanceof UsageError) {
    io.err(`forecourt ${command}: ${error.message}\n\n${usage}`);
    return 2;
  }
  if (error instanceof ApiError) {
    const lines = [`forecourt: ${clean(error.code)}: ${clean(error.message)}`];
    for (const issue of error.issues) lines.push(`  ${clean(issue.path)}: ${clean(issue.message)}`);
    if (error.status === 401) {
      lines.push('The admin token was refused: check ADMIN_TOKEN, --token or <DATA_DIR>/admin-token.');
    }
    if (error.requestId) lines.push(`(request id: ${clean(error.requestId)})`);
    io.err(`${lines.join('\n')}\n`);
    return 1;
  }
  if (error instanceof CliError) {
    io.err(`forecourt: ${error.message}\n`);
    return 1;
  }
  throw error;
}
