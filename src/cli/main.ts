const USAGE = `forecourt: the partner API for vehicle listings

Usage:
  forecourt serve                 start the service (configuration from the environment / .env)
  forecourt demo                  start on the embedded database with demo data and print secrets
  forecourt migrate               apply pending database migrations and exit
  forecourt dealers <command>     manage dealer profiles through the admin API (see: forecourt dealers --help)
  forecourt partners <command>    manage partners and their secrets (see: forecourt partners --help)
  forecourt webhooks <command>    see, inspect, disable and enable partners' webhook endpoints (see: forecourt webhooks --help)
  forecourt requests <command>    partners' failed requests and usage (see: forecourt requests --help)
  forecourt operators <command>   named operator tokens (see: forecourt operators --help)
  forecourt audit-log [options]   operator actions and failed authentications (see: forecourt audit-log --help)
  forecourt import <feed> ...     upload a CSV or JSON feed of listings as a partner (see: forecourt import --help)
`;

async function loadEnv(): Promise<Record<string, string | undefined>> {
  const { config } = await import('dotenv');
  // .env fills in what the real environment does not set; the environment always wins.
  config({ quiet: true });
  return process.env;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve': {
        const { serve } = await import('../server.js');
        await serve(await loadEnv());
        return 0;
      }
      case 'demo': {
        const { runDemo } = await import('../demo/run.js');
        await runDemo(await loadEnv());
        return 0;
      }
      case 'migrate': {
        const { runMigrate } = await import('./migrate.js');
        return await runMigrate(await loadEnv());
      }
      case 'dealers':
      case 'partners':
      case 'webhooks':
      case 'operators':
      case 'requests': {
        const { runAdminCommand } = await import('./admin-commands.js');
        return await runAdminCommand(command, rest, await loadEnv());
      }
      case 'audit-log': {
        const { runAdminCommand } = await import('./admin-commands.js');
        // One command: its options follow `audit-log` directly.
        const args =
          rest[0] !== undefined && ['-h', '--help', 'help', 'show'].includes(rest[0])
            ? rest
            : ['show', ...rest];
        return await runAdminCommand('audit-log', args, await loadEnv());
      }
      case 'import': {
        const { runImport } = await import('@forecourt/client/import');
        return await runImport(rest, await loadEnv());
      }
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(USAGE);
        return command === undefined ? 1 : 0;
      default:
        process.stderr.write(`forecourt: unknown command "${command}"\n\n${USAGE}`);
        return 1;
    }
  } catch (error) {
    // Only starting commands get here (a running service handles its own errors): one line,
    // naming what to fix, and a non-zero exit.
    const { startupFailureLine } = await import('./startup-errors.js');
    process.stderr.write(`forecourt: ${startupFailureLine(error, process.env)}\n`);
    if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') {
      process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
    }
    return 1;
  }
}
