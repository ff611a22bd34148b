const USAGE = `forecourt: the partner API for vehicle listings

Usage:
  forecourt serve                 start the service (configuration from the environment / .env)
  forecourt demo                  start on the embedded database with demo data and print secrets
  forecourt migrate               apply pending database migrations and exit
  forecourt check read-model [--repair]
                                  compare the stored listing and dealer JSON with a fresh build; rewrite what drifted
  forecourt dealers <command>     manage dealer profiles through the admin API (see: forecourt dealers --help)
  forecourt partners <command>    manage partners and their secrets (see: forecourt partners --help)
  forecourt webhooks <command>    see, inspect, disable and enable partners' webhook endpoints (see: forecourt webhooks --help)
  forecourt requests <command>    partners' failed requests and usage (see: forecourt requests --help)
  forecourt operators <command>   named operator tokens (see: forecourt operators --help)
  forecourt audit-log [options]   operator actions and failed authentications (see: forecourt audit-log --help)
  forecourt import <feed> ...     upload a CSV or JSON feed of listings as a partner (see: forecourt import --help)
  forecourt listen --forward-to URL ...
                                  deliver a partner's changes to a local URL as signed webhooks would (see: forecourt listen --help)
`;

/** What `forecourt serve|demo|migrate --help` prints: these take no arguments, only the environment. */
const STARTER_HELP: Record<'serve' | 'demo' | 'migrate', string> = {
  serve: `Usage: forecourt serve

Starts the service. It takes no arguments: configuration comes from the environment and a .env
file (PORT, HOST, DATA_DIR, DATABASE_URL, TLS_CERT_FILE, TLS_KEY_FILE, ...; docs/operations.md).
`,
  demo: `Usage: forecourt demo

Starts the service on the embedded database in DATA_DIR (default ./data) with demo dealers and
listings, and prints a read-only and a read-write partner secret, the read-write partner's test
secret (fc_test_..., with a few test listings), the certificate to trust and the export lines
docs/partner-guide.md uses. It takes no arguments; PORT, HOST and DATA_DIR come from
the environment. Ctrl-C stops it.

The read-write partner may manage webhooks, and the demo delivers to loopback addresses over http
(http://127.0.0.1:PORT/...) so a receiver on this machine works (WEBHOOK_ALLOW_LOOPBACK=false turns
that off). The secrets are kept in DATA_DIR/demo-secrets.json: a restart prints the same ones, and
says so when it had to issue new ones.
`,
  migrate: `Usage: forecourt migrate

Applies the pending database migrations (DATABASE_URL, or the embedded database in DATA_DIR) and
exits. It takes no arguments: configuration comes from the environment and a .env file.
`,
};

/**
 * `serve`, `demo` and `migrate` start something: `--help` must print help and start nothing
 * (`forecourt demo --help` started the demo), and an argument they do not take is a mistake.
 */
function starterArguments(command: 'serve' | 'demo' | 'migrate', rest: string[]): number | undefined {
  if (rest.length === 0) return undefined;
  if (rest.some((arg) => ['-h', '--help', 'help'].includes(arg))) {
    process.stdout.write(STARTER_HELP[command]);
    return 0;
  }
  process.stderr.write(`forecourt ${command}: unexpected argument "${rest[0]}"\n\n${STARTER_HELP[command]}`);
  return 2;
}

async function loadEnv(): Promise<Record<string, string | undefined>> {
  const { config } = await import('dotenv');
  // .env fills in what the real environment does not set; the environment always wins.
  config({ quiet: true });
  return process.env;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve' || command === 'demo' || command === 'migrate') {
    const exit = starterArguments(command, rest);
    if (exit !== undefined) return exit;
  }
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
      case 'check': {
        const { runCheck } = await import('./check.js');
        return await runCheck(rest, await loadEnv());
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
      case 'listen': {
        const { runListen } = await import('@forecourt/client/listen');
        return await runListen(rest, await loadEnv());
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
