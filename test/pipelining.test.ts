import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import tls from 'node:tls';
import { ALL_SCOPES, bootApp, createPartner, createTree, EXT, type TestApp } from './helpers/app.js';

/**
 * One connection's pipelined requests do not hold another connection's request up (issue 40):
 * the service serves one request of a connection at a time, so a request on a second connection
 * takes its turn after at most a few of the queue's. Judged by order (how many of the pipelined
 * answers came before the other connection's), not by milliseconds. Before the fix the service
 * took all of them in at once and the other request waited behind nearly the whole queue.
 */

let app: TestApp;
let secret: string;
before(async () => {
  app = await bootApp();
  const tree = await createTree(app);
  secret = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
});
after(() => app.close());

const PIPELINED = 150;

/** A TLS connection to the service and the answers read from it (status of each, in order). */
function connection() {
  const { port } = new URL(app.url);
  const socket = tls.connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false });
  const statuses: number[] = [];
  const bodies: string[] = [];
  let buffer = Buffer.alloc(0);
  const listeners: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) break;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) break;
      statuses.push(Number(head.slice(9, 12)));
      bodies.push(buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
      buffer = buffer.subarray(end + 4 + length);
    }
    for (const listener of listeners) listener();
  });
  const ready = new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return {
    ready,
    socket,
    statuses,
    bodies,
    /** Resolves once n answers have been read. */
    answers(n: number): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => statuses.length >= n && resolve();
        listeners.push(check);
        socket.once('close', () => reject(new Error(`closed after ${statuses.length} of ${n} answers`)));
        check();
      });
    },
  };
}

const head = () => `Host: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\n`;
const get = (path: string) => `GET ${EXT}${path} HTTP/1.1\r\n${head()}\r\n`;
const put = (reference: string, body: string) =>
  `PUT ${EXT}/listings/${reference}?dryRun=true HTTP/1.1\r\n${head()}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

test("a connection's pipelined requests do not starve another connection's", async () => {
  const flood = connection();
  const other = connection();
  await Promise.all([flood.ready, other.ready]);
  // Bodies among the queue too: a request that waits keeps its body for when its turn comes.
  const listing = JSON.stringify({ title: 'Volkswagen Golf', price: 19950 });
  const requests = Array.from({ length: PIPELINED }, (_, i) =>
    i % 10 === 5 ? put(`PIPE-${i}`, listing) : get(`/listings?pageSize=1&page=${i + 1}`),
  );
  flood.socket.write(requests.join(''));
  // The other connection asks once the queue is being served.
  await flood.answers(1);
  other.socket.write(get('/listings?pageSize=1'));
  await other.answers(1);
  const before = flood.statuses.length;
  await flood.answers(PIPELINED);
  assert.equal(other.statuses[0], 200, other.bodies[0]);
  // One request of each connection at a time: the other's answer comes after a few of the
  // queue's (those in flight and written when it arrived), not after the whole queue.
  assert.ok(
    before < PIPELINED / 3,
    `${before} of ${PIPELINED} pipelined answers came before the other connection's one`,
  );
  // Every pipelined request answered, in order, and each as if it had come alone (a dry-run PUT
  // of a new reference: 200 or 201, whichever the dry run reports; its body names its reference).
  assert.equal(flood.statuses.length, PIPELINED);
  for (const [i, status] of flood.statuses.entries())
    assert.ok(i % 10 === 5 ? status === 200 || status === 201 : status === 200, `answer ${i}: ${status}`);
  for (const [i, body] of flood.bodies.entries()) {
    if (i % 10 === 5) assert.equal(JSON.parse(body).data.externalReference, `PIPE-${i}`);
    else assert.equal(JSON.parse(body).pagination.page, i + 1);
  }
  flood.socket.destroy();
  other.socket.destroy();
});

test('a connection that closes with requests waiting leaves the service serving others', async () => {
  const flood = connection();
  await flood.ready;
  flood.socket.write(get('/listings?pageSize=1').repeat(50));
  await flood.answers(1);
  flood.socket.destroy();
  const reply = await app.call('GET', `${EXT}/listings?pageSize=1`, { secret });
  assert.equal(reply.status, 200, reply.text);
});
