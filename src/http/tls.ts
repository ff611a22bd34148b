import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** SHA-256 fingerprint of the certificate, for pinning or checking by hand. */
  fingerprint: string;
  /** Where the certificate came from, for the start-up log. */
  certPath: string;
  generated: boolean;
}

/**
 * The configured certificate, or a self-signed one for localhost created on first start in
 * `<dataDir>/tls` and reused after that, so clients that pinned it keep working across restarts.
 */
export async function loadTls(options: {
  certFile?: string | undefined;
  keyFile?: string | undefined;
  dataDir: string;
}): Promise<TlsMaterial> {
  if (options.certFile && options.keyFile) {
    const cert = readFileSync(options.certFile, 'utf8');
    const key = readFileSync(options.keyFile, 'utf8');
    return {
      cert,
      key,
      fingerprint: fingerprintOf(cert),
      certPath: path.resolve(options.certFile),
      generated: false,
    };
  }
  const dir = path.resolve(options.dataDir, 'tls');
  const certPath = path.join(dir, 'localhost-cert.pem');
  const keyPath = path.join(dir, 'localhost-key.pem');
  let generated = false;
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const notAfter = new Date();
    notAfter.setFullYear(notAfter.getFullYear() + 5);
    // Loaded only to create a certificate (once per data directory): its libraries hold about
    // 10 MB that a service with its certificate already made would carry for nothing.
    const { generate } = await import('selfsigned');
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false, critical: true },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    writeFileSync(keyPath, pems.private, { mode: 0o600 });
    writeFileSync(certPath, pems.cert, { mode: 0o644 });
    generated = true;
  }
  const cert = readFileSync(certPath, 'utf8');
  return { cert, key: readFileSync(keyPath, 'utf8'), fingerprint: fingerprintOf(cert), certPath, generated };
}

function fingerprintOf(cert: string): string {
  return new X509Certificate(cert).fingerprint256;
}
