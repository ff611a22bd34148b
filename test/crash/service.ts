import type { Reply } from '../helpers/app.js';
import { httpsCall } from '../helpers/https-call.js';
import { type ServeProcess, startServe } from '../helpers/service-process.js';

/**
 * `forecourt serve` on a data directory that outlives it: the crash tests kill it with SIGKILL and
 * start a new one on the same data. (spawnService in test/helpers/service-process.ts makes a fresh
 * directory per process and removes it.)
 */
export interface CrashService extends Omit<ServeProcess, 'dispatcher'> {
  /** Log lines at level error or above (5xx stacks), kept for the failure message. */
  errors: string[];
  /** A call over HTTPS trusting the generated certificate; every partner-API reply is contract-checked. */
  call(
    method: string,
    urlPath: string,
    options?: { bearer?: string; body?: unknown; signal?: AbortSignal },
  ): Promise<Reply>;
}

export async function startService(dataDir: string, env: Record<string, string>): Promise<CrashService> {
  const errors: string[] = [];
  // Under load there is a log line per request: a regular expression, not JSON.parse, picks the errors.
  const serve = await startServe(dataDir, env, (line) => {
    if (/"level":(50|60)/.test(line) && errors.length < 50) errors.push(line.slice(0, 3000));
  });
  return {
    child: serve.child,
    url: serve.url,
    exited: serve.exited,
    stderr: serve.stderr,
    kill: serve.kill,
    errors,
    call: (method, urlPath, options = {}) =>
      httpsCall(serve.url, serve.dispatcher, method, urlPath, {
        ...options,
        headers: options.bearer ? { authorization: `Bearer ${options.bearer}` } : {},
      }),
  };
}
