// A webhook receiver for trying deliveries on your own machine (docs/partner-guide.md §9): it
// verifies each delivery's signature with WEBHOOK_SECRET (the whsec_… secret POST /webhooks
// answered with; two, space-separated, during a rotation), prints one line per delivery and answers
// 204. An unsigned or altered request is answered 401 and printed as refused.
//
//   WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs [port]     (default port 8787)
import { createServer } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@forecourt/client';

const port = Number(process.argv[2] ?? process.env.PORT ?? 8787);
const secrets = (process.env.WEBHOOK_SECRET ?? '').split(/\s+/).filter(Boolean);
if (secrets.length === 0) {
  console.error('Set WEBHOOK_SECRET=whsec_… (the secret POST /webhooks answered with).');
  process.exit(2);
}

createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      // The raw bytes: JSON parsed and written again would not match the signature.
      const delivery = verifyWebhook(Buffer.concat(chunks), req.headers, secrets);
      const listings = delivery.data.map((l) => `${l.externalReference ?? l.id} (${l.status})`);
      console.log(
        `${req.headers['webhook-id']} ${delivery.type}: ${listings.length} listing(s) ${listings.join(', ')}`,
      );
      res.writeHead(204).end();
    } catch (error) {
      console.log(`refused: ${error.message}`);
      res.writeHead(error instanceof WebhookVerificationError ? 401 : 500).end();
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`));
