/**
 * The HTTP limit of a read scenario: the same framework, TLS and response bytes as the service,
 * and nothing else (no auth, no database, no serialization: each body is pre-serialized).
 *   node --import tsx bench/http-limit-server.ts <port> <bodies.json: {path: body}> <dir with localhost-cert.pem/key>
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import Fastify from 'fastify';

const [port, bodiesFile, tlsDir] = process.argv.slice(2) as [string, string, string];
const bodies = new Map(
  Object.entries(JSON.parse(readFileSync(bodiesFile, 'utf8')) as Record<string, string>),
);
const app = Fastify({
  serverFactory: (handler) =>
    https.createServer(
      {
        key: readFileSync(path.join(tlsDir, 'localhost-key.pem')),
        cert: readFileSync(path.join(tlsDir, 'localhost-cert.pem')),
      },
      handler,
    ),
});
app.get('/ready', async () => 'ok');
app.get('/*', async (request, reply) => {
  const body = bodies.get(request.url);
  if (body === undefined) return reply.code(404).send('unknown path');
  return reply.type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
