import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Node's own flags for a socket whose parser it paused (its pipelining flood guard uses them). */
type PausableSocket = Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };

/** Requests of one connection that may wait before it is read no further. */
export const MAX_WAITING = 16;

/**
 * One request of a connection served at a time (issue 40). Node's HTTP server hands every request
 * it parses to the handler at once, pipelined ones too, and only holds their answers back until
 * the earlier ones are written: a client that writes 100 requests in one go put 100 requests in
 * front of everyone else's (a normal request waited 8.3 s behind 50 such connections). Here a
 * request that arrives while another of its connection is in flight waits for it, so every
 * connection has at most one request in the service and a pipelining one takes its turn among the
 * others, one request at a time. HTTP/1.1 answers pipelined requests in order anyway: a pipelining
 * client loses nothing it was promised.
 *
 * What waits is paced, not capped: past MAX_WAITING requests the connection is read no further
 * (Node's own pause of the socket and its parser, as its flood guard does); the requests already
 * parsed from the last read (up to a read's 64 KiB, some 2,000 small GETs) still wait, and each
 * read again adds at most one more read's worth, so a flooding connection grows its queue by at
 * most 64 KiB of requests per `readAgainMs`. A paused parser may hold the first
 * bytes of a request, and Node answers a request whose headers take longer than the headers
 * timeout with 408 and closes the connection: so a paused connection is read again every
 * `readAgainMs` (half that timeout), one chunk at a time, and a client that keeps its queue full
 * is still never cut off, only paced.
 */
export function onePerConnection(handler: Handler, readAgainMs: number): Handler {
  const queues = new WeakMap<Socket, [IncomingMessage, ServerResponse][]>();
  const watched = new WeakSet<Socket>();
  const timers = new WeakMap<Socket, NodeJS.Timeout>();

  function pause(socket: PausableSocket): void {
    if (socket._paused) return;
    socket._paused = true;
    socket.pause();
    // Read again before a request the parser holds in part could run past the headers timeout.
    const timer = setTimeout(() => {
      timers.delete(socket);
      resume(socket);
    }, readAgainMs);
    timer.unref();
    timers.set(socket, timer);
  }

  function resume(socket: PausableSocket): void {
    const timer = timers.get(socket);
    if (timer) clearTimeout(timer);
    timers.delete(socket);
    if (!socket._paused || socket.destroyed) return;
    socket._paused = false;
    socket.parser?.resume();
    socket.resume();
  }

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
      if (queue.length < MAX_WAITING) resume(socket as PausableSocket);
      if (following) {
        serve(socket, queue, ...following);
        return;
      }
      queues.delete(socket);
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
      if (queue.length >= MAX_WAITING) pause(socket as PausableSocket);
      return;
    }
    const fresh: [IncomingMessage, ServerResponse][] = [];
    queues.set(socket, fresh);
    if (!watched.has(socket)) {
      watched.add(socket);
      socket.once('close', () => {
        queues.delete(socket);
        const timer = timers.get(socket);
        if (timer) clearTimeout(timer);
      });
    }
    serve(socket, fresh, req, res);
  };
}
