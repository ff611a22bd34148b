import { createSecureContext } from 'node:tls';
import { Agent, Dispatcher, request } from 'undici';
import type { Reply } from './app.js';
import { assertContract } from './contract.js';

export interface HttpsCallOptions {
  headers?: Record<string, string>;
  /** A JSON value, sent with Content-Type: application/json unless a content type is given. */
  body?: unknown;
  /** A body sent as it is (with whatever content type the headers name). */
  raw?: string;
  signal?: AbortSignal;
}

/**
 * One request to a service under test, in-process or a child process alike: the answer parsed when
 * it is JSON, and every partner-API answer checked against the OpenAPI document.
 */
export async function httpsCall(
  base: string,
  dispatcher: Dispatcher,
  method: string,
  urlPath: string,
  options: HttpsCallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(`${base}${urlPath}`, {
    method: method as Dispatcher.HttpMethod,
    headers,
    body,
    dispatcher,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const reply = { status: res.statusCode, headers: res.headers, body: parsed, text };
  assertContract(method, urlPath, reply);
  return reply;
}

/**
 * An Agent that is replaced by a new one after an answer that closed its connection: undici 7
 * (nodejs/undici#5022) then opens a new connection for every later request of that Agent, and a
 * suite that provokes `Connection: close` on purpose (fuzz, hostile text) spent a third of its CPU
 * in TLS handshakes. Whoever holds this dispatcher (undici's request, the client package, a proxy)
 * gets the renewal, not only callers of keptAliveClient's `call`.
 */
class RenewingAgent extends Dispatcher {
  #current: Agent;
  readonly #make: () => Agent;
  /** Agents replaced while they still finish what they had in flight; close and destroy reach them. */
  readonly #retiring = new Set<Agent>();
  #closed = false;

  constructor(make: () => Agent) {
    super();
    this.#make = make;
    this.#current = make();
  }

  #renew(agent: Agent): void {
    if (this.#closed || this.#current !== agent) return;
    this.#current = this.#make();
    // Close waits for what the old Agent still has in flight (the body of the answer that closed).
    this.#retiring.add(agent);
    void agent
      .close()
      .catch(() => {})
      .finally(() => this.#retiring.delete(agent));
  }

  #all(): Agent[] {
    return [this.#current, ...this.#retiring];
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const agent = this.#current;
    const closes = (value: unknown) => String(value).toLowerCase() === 'close';
    const watched = new Proxy(handler, {
      get: (target, prop, receiver) => {
        const original = Reflect.get(target, prop, receiver);
        if (typeof original !== 'function') return original;
        // The handler API of undici 7 (onResponseStart) and the one request() still uses (onHeaders).
        if (prop === 'onResponseStart') {
          return (
            controller: unknown,
            status: number,
            headers: Record<string, unknown>,
            ...rest: unknown[]
          ) => {
            if (closes(headers?.connection)) this.#renew(agent);
            return original.call(target, controller, status, headers, ...rest);
          };
        }
        if (prop === 'onHeaders') {
          return (status: number, raw: Buffer[], ...rest: unknown[]) => {
            for (let i = 0; i + 1 < raw.length; i += 2) {
              if (String(raw[i]).toLowerCase() === 'connection' && closes(raw[i + 1])) this.#renew(agent);
            }
            return original.call(target, status, raw, ...rest);
          };
        }
        return original.bind(target);
      },
    });
    return agent.dispatch(options, watched);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    this.#closed = true;
    const closing = Promise.all(this.#all().map((agent) => agent.close())).then(() => {});
    if (!callback) return closing;
    void closing.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(...args: unknown[]): Promise<void> | void {
    const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    const err = (args.find((a) => a instanceof Error) as Error | undefined) ?? null;
    this.#closed = true;
    const destroying = Promise.all(this.#all().map((agent) => agent.destroy(err))).then(() => {});
    if (!callback) return destroying;
    void destroying.then(callback, callback);
  }
}

/**
 * A client of one service under test that keeps its connection: one TLS context for the test CA
 * (given `ca`, every connection would build its own, root store included), through an Agent
 * renewed after an answer that closed its connection (RenewingAgent).
 */
export function keptAliveClient(ca: string, servername = 'localhost') {
  const secureContext = createSecureContext({ ca });
  const dispatcher = new RenewingAgent(() => new Agent({ connect: { secureContext, servername } }));
  return {
    get dispatcher(): Dispatcher {
      return dispatcher;
    },
    call: (base: string, method: string, urlPath: string, options: HttpsCallOptions = {}): Promise<Reply> =>
      httpsCall(base, dispatcher, method, urlPath, options),
    close: () => dispatcher.close(),
  };
}
