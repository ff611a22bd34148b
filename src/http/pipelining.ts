import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Node's own flags for a socket whose parser it paused (its pipelining flood guard uses them). */
type PausableSocket = Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };

/**
 * One request of a connection served at a time (issue 40). Node's HTTP server hands every request
 * it parses to the handler at once, pipelined ones too, and only holds their answers back until
 * the earlier ones are written: a client that writes 100 requests in one go puts 100 requests in
 * front of everyone else's (a normal request waited 8.3 s behind 50 such connections). Here a
 * request that arrives while another of its connection is in flight waits, and the connection is
 * read no further (Node's own pause: the socket and its parser, resumed as Node resumes them) until
 * its queue is served. So every connection has at most one request in the service, and a
 * pipelining one takes its turn among the others, one request at a time. Pipelining clients lose
 * nothing they were promised: HTTP/1.1 answers pipelined requests in order anyway.
 */
export function onePerConnection(handler: Handler): Handler {
  const queues = new WeakMap<Socket, [IncomingMessage, ServerResponse][]>();
  const watched = new WeakSet<Socket>();

  function serve(
    socket: Socket,
    queue: [IncomingMessage, ServerResponse][],
    req: IncomingMessage,
    res: ServerResponse,
  ) {
    let done = false;
    const next = () => {
      if (done) return;
      done = true;
      // A connection that closed has no one left to answer what waits on it.
      const following = socket.destroyed ? undefined : queue.shift();
      if (following) {
        serve(socket, queue, ...following);
        return;
      }
      queues.delete(socket);
      resume(socket as PausableSocket);
    };
    // 'finish': the answer is written; 'close': the connection went first.
    res.once('finish', next);
    res.once('close', next);
    handler(req, res);
  }

  return (req, res) => {
    const socket = req.socket;
    const queue = queues.get(socket);
    if (queue) {
      queue.push([req, res]);
      pause(socket as PausableSocket);
      return;
    }
    const fresh: [IncomingMessage, ServerResponse][] = [];
    queues.set(socket, fresh);
    if (!watched.has(socket)) {
      watched.add(socket);
      socket.once('close', () => queues.delete(socket));
    }
    serve(socket, fresh, req, res);
  };
}

/** Reads no more of the connection: Node pauses its parser after the bytes in hand (its own flag). */
function pause(socket: PausableSocket): void {
  if (socket._paused) return;
  socket._paused = true;
  socket.pause();
}

function resume(socket: PausableSocket): void {
  if (!socket._paused || socket.destroyed) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}
