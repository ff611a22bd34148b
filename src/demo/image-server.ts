import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { demoImage } from './images/index.js';

/**
 * The demo's own image host: plain HTTP on a loopback address, serving the sample images
 * (src/demo/images/) that its listings use, so the demo works offline and its image checks end
 * in every state (docs/images.md). Plain HTTP, not the service's HTTPS: the checker fetches over
 * public rules from a certificate it would not trust (the demo's is self-signed), and a partner
 * opens the URLs in a browser without a warning. The query string is ignored, so one file can
 * stand behind several distinct URLs.
 */
export interface DemoImageServer {
  /** `http://127.0.0.1:PORT`, what the demo's listings' image URLs begin with. */
  origin: string;
  port: number;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

/** Listens on `port` (0: any free port); rejects when it is taken. */
export async function startDemoImageServer(port: number): Promise<DemoImageServer> {
  const server = http.createServer((req, res) => {
    const sample = demoImage(new URL(req.url ?? '/', 'http://localhost').pathname);
    if (!sample || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end('No such demo image.\n');
    }
    res.writeHead(sample.status, {
      'content-type': sample.contentType,
      'content-length': sample.body.length,
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : sample.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    origin: `http://${HOST}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
