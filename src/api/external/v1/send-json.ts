import type { FastifyReply } from 'fastify';

/**
 * Sends JSON text that is already finished (built by the database, spliced together): as bytes,
 * so no serializer touches it again. Only for text made from a response schema's own shape;
 * the contract tests check these responses against the document like every other.
 */
export function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return sendBytes(reply, Buffer.from(json));
}

const sendBytes = (reply: FastifyReply, bytes: Buffer): FastifyReply =>
  reply.header('Content-Type', 'application/json; charset=utf-8').send(bytes);

const LIST_HEAD = Buffer.from('{"data":[');
const COMMA = 0x2c;
const utf8 = new TextEncoder();

/**
 * `{"data":[...items], ...rest}`: a list whose items are finished JSON text, followed by the rest
 * of the answer (already through its schema) in its order.
 *
 * The items are encoded one after another into one buffer, sized for text that is all ASCII with
 * an eighth to spare and grown if that is not enough: joining the texts first and encoding the
 * whole page (about 175 kB for 50 listings) cost 2.4 ms a page against 0.26 ms for each item
 * encoded on its own and the pieces put together (node 20, 2026-11-29): the joined text is copied
 * again to be flattened, and a page with any character outside ASCII takes the slow UTF-8 path as
 * a whole. Encoding into one buffer leaves out the pieces and their copy: 533 locations in 0.12 ms
 * against 0.26, 50 listings in 0.02 to 0.04 against 0.07 (bench/results/2026-11-30-send-list.txt).
 */
export function sendList(reply: FastifyReply, items: readonly string[], rest: object): FastifyReply {
  const json = JSON.stringify(rest);
  const tail = json === '{}' ? ']}' : `],${json.slice(1)}`;
  let chars = LIST_HEAD.length + items.length + tail.length;
  for (const item of items) chars += item.length;
  let bytes = Buffer.allocUnsafe(chars + (chars >> 3) + 64);
  let at = LIST_HEAD.copy(bytes, 0);
  // Characters outside ASCII can take more than the room left: a buffer twice as large, what is
  // written so far copied over.
  const grow = (atLeast: number) => {
    const larger = Buffer.allocUnsafe(bytes.length * 2 + atLeast);
    bytes.copy(larger, 0, 0, at);
    bytes = larger;
  };
  const put = (text: string) => {
    for (let from = 0; ; ) {
      const { read, written } = utf8.encodeInto(from ? text.slice(from) : text, bytes.subarray(at));
      at += written;
      from += read;
      if (from === text.length) return;
      grow((text.length - from) * 3);
    }
  };
  items.forEach((item, i) => {
    if (i > 0) {
      if (at === bytes.length) grow(1);
      bytes[at++] = COMMA;
    }
    put(item);
  });
  put(tail);
  return sendBytes(reply, bytes.subarray(0, at));
}
