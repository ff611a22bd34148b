#!/usr/bin/env node
// `forecourt import` for partners: the feed importer of @forecourt/client. The operator commands
// (serve, dealers, partners...) come with the Forecourt service, not with this package.
import { runImport } from './import/index.js';
import { runListen } from './listen/index.js';

const USAGE = `forecourt (partner tools of @forecourt/client)

Usage:
  forecourt import <feed.csv|feed.json> --url URL --secret SECRET [options]
                                  upload a feed of listings (see: forecourt import --help)
  forecourt listen --forward-to LOCAL_URL --url URL --secret SECRET
                                  deliver your listings' changes to a local URL as signed
                                  webhooks would (see: forecourt listen --help)
`;

const [command, ...rest] = process.argv.slice(2);
if (command === 'import') {
  process.exitCode = await runImport(rest, process.env);
} else if (command === 'listen') {
  process.exitCode = await runListen(rest, process.env);
} else if (command === undefined || ['-h', '--help', 'help'].includes(command)) {
  process.stdout.write(USAGE);
  process.exitCode = command === undefined ? 1 : 0;
} else {
  process.stderr.write(
    `forecourt: "${command}" is not a command of @forecourt/client (it has: import, listen); ` +
      `operator commands come with the Forecourt service\n\n${USAGE}`,
  );
  process.exitCode = 1;
}
