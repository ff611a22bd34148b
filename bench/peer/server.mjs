// Platformatic DB, the peer of `npm run bench` (bench/peer.ts): a Fastify REST layer generated from
// the database's schema, pointed at the same database as Forecourt, served over HTTPS with a
// certificate as Forecourt is. Runs on Node.js 22 (what @platformatic/db 3 requires).
//
//   node server.mjs <port> <database url> <tls key file> <tls cert file>
import { readFileSync } from 'node:fs';
import { create } from '@platformatic/db';

const [port, connectionString, key, cert] = process.argv.slice(2);
const app = await create(import.meta.dirname, {
  server: {
    hostname: '127.0.0.1',
    port: Number(port),
    https: { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') },
    logger: { level: 'warn' },
  },
  db: { connectionString, openapi: true, graphql: false },
  watch: false,
});
await app.init();
const url = await app.start({ listen: true });
process.stdout.write(`listening ${url}\n`);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await app.stop();
    process.exit(0);
  });
}
