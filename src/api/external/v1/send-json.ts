import type { FastifyReply } from 'fastify';

/**
 * Sends JSON text that is already finished (built by the database, spliced together): as bytes,
 * so no serializer touches it again. Only for text made from a response schema's own shape;
 * the contract tests check these responses against the document like every other.
 */
export function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.header('Content-Type', 'application/json; charset=utf-8').send(Buffer.from(json));
}

/**
 * `{"data":[...items], ...rest}`: a list whose items are finished JSON text, followed by the rest
 * of the answer (already through its schema) in its order.
 */
export function sendList(reply: FastifyReply, items: readonly string[], rest: object): FastifyReply {
  const tail = JSON.stringify(rest);
  return sendJson(reply, `{"data":[${items.join(',')}]${tail === '{}' ? '}' : `,${tail.slice(1)}`}`);
}
