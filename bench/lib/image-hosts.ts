/**
 * Image servers for bench/image-checks.ts, in a process of their own (so serving images does not
 * share the event loop of the load generator): `--hosts N` servers of test/helpers/image-server.ts,
 * each on its own port, which the checker counts as its own host (its per-host limits are by host
 * and port). Prints their origins as one JSON line on stdout, then serves until killed.
 */
import { parseArgs } from 'node:util';
import { startImageServer } from '../../test/helpers/image-server.js';

const { values } = parseArgs({ options: { hosts: { type: 'string', default: '16' } } });
const servers = await Promise.all(Array.from({ length: Number(values.hosts) }, () => startImageServer()));
process.stdout.write(`${JSON.stringify(servers.map((s) => s.origin))}\n`);
const stop = async () => {
  await Promise.all(servers.map((s) => s.close()));
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
