import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { MAX_WAITING, onePerConnection } from '../../src/http/pipelining.js';

/**
 * onePerConnection (src/http/pipelining.ts) on a plain Node server: one request of a connection in
 * the handler at a time, what waits bounded, and a connection it stopped reading is read again
 * before Node's headers timeout could cut it off (test/pipelining.test.ts has the service itself).
 */

const REQUEST = 'GET /x HTTP/1.1\r\nHost: x\r\n\r\n';

async function serve(
  handle: (res: http.ServerResponse) => void,
  readAgainMs: number,
  headersTimeout = 10_000,
) {
  let inHandler = 0;
  let most = 0;
  const server = http.createServer(
    { connectionsCheckingInterval: 100 },
    onePerConnection((_req, res) => {
      most = Math.max(most, ++inHandler);
      // Out of the handler when it answers (before the next request of the connection comes in).
      const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
      res.end = ((...args: unknown[]) => {
        inHandler--;
        return end(...args);
      }) as typeof res.end;
      handle(res);
    }, readAgainMs),
  );
  server.headersTimeout = headersTimeout;
  server.requestTimeout = headersTimeout * 2;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, most: () => most, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Connects, writes each part in turn, and resolves with the statuses answered once the socket ends;
 * a connection the server reset ends the list with 0 (Node 24 resets where Node 20 answers 408).
 */
function pipeline(port: number, parts: string[], gapMs: number, expected: number): Promise<number[]> {
  return new Promise((resolve) => {
    const statuses: number[] = [];
    const socket = net.connect(port, '127.0.0.1', async () => {
      for (const part of parts) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, gapMs));
      }
    });
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      for (const match of text.matchAll(/HTTP\/1\.1 (\d{3})/g)) statuses.push(Number(match[1]));
      text = text.slice(text.lastIndexOf('HTTP/1.1') + 1);
      if (statuses.length >= expected) socket.destroy();
    });
    socket.on('close', () => resolve(statuses));
    socket.on('error', () => statuses.push(0));
  });
}

test('a connection has one request in the handler at a time; every pipelined one is answered in order', async () => {
  const server = await serve((res) => setTimeout(() => res.end('ok'), 1), 5_000);
  try {
    const statuses = await pipeline(server.port, [REQUEST.repeat(200)], 0, 200);
    assert.equal(statuses.length, 200);
    assert.ok(statuses.every((s) => s === 200));
    assert.equal(server.most(), 1);
  } finally {
    await server.close();
  }
});

test('a connection read no further is read again before the headers timeout: it is paced, never cut off with 408', async () => {
  // Each request takes 100 ms; MAX_WAITING + 15 wait, so the connection is paused for 1.5 s (until
  // fewer than MAX_WAITING wait). The first write ends in the middle of a request and the rest arrives at once, while
  // the connection is paused: the parser holds the first half, and Node's 1 s headers timeout
  // would answer 408 and close the connection if nothing read the rest in time.
  const count = MAX_WAITING + 20;
  const all = REQUEST.repeat(count);
  const cut = REQUEST.length * (MAX_WAITING + 16) + 10;
  const parts = [all.slice(0, cut), all.slice(cut)];
  const paced = await serve((res) => setTimeout(() => res.end('ok'), 100), 400, 1_000);
  try {
    const statuses = await pipeline(paced.port, parts, 50, count);
    assert.deepEqual(statuses, Array(count).fill(200));
  } finally {
    await paced.close();
  }
  // The same without reading again (a timer that never comes in time): the 408 this guards against.
  const unpaced = await serve((res) => setTimeout(() => res.end('ok'), 100), 60_000, 1_000);
  try {
    const statuses = await pipeline(unpaced.port, parts, 50, count);
    assert.ok(statuses.includes(408) || statuses.includes(0), `statuses: ${statuses.join(' ')}`);
  } finally {
    await unpaced.close();
  }
});
