// The TLS material of the TCP interface ([controller] tls_cert and tls_key, tickd.toml(5)):
// read and checked once at start-up, so that a bad pair is a startup error naming the files,
// never a TLS port on which every handshake fails. The workers get the checked PEM text.
import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { StartupError } from '../errors.ts';
import type { Config } from './schema.ts';

export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
}

// The PEM pair is checked here, once, so that a bad pair is a startup error naming the files.
// createSecureContext alone is not enough: it silently accepts an EMPTY cert or key file (it
// skips falsy values), which would start a TLS port on which every handshake fails.
export function loadTls(config: Config): TlsMaterial | null {
  const { tls_cert, tls_key } = config.controller;
  if (tls_cert === null || tls_key === null) return null;
  const invalid = (message: string) => new StartupError('tls', 'InvalidValue', message);
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw invalid(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  };
  const cert = read(tls_cert, 'controller.tls_cert');
  const key = read(tls_key, 'controller.tls_key');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert); // the first certificate of the file: the server's own
  } catch (err) {
    throw invalid(`controller.tls_cert ${tls_cert} holds no PEM certificate: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw invalid(`controller.tls_key ${tls_key} holds no usable PEM private key: ${(err as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw invalid(`controller.tls_cert ${tls_cert} and controller.tls_key ${tls_key} do not form a usable pair: the key does not match the first certificate`);
  }
  try {
    createSecureContext({ cert, key, minVersion: 'TLSv1.2' });
  } catch (err) {
    throw invalid(`controller.tls_cert ${tls_cert} and controller.tls_key ${tls_key} do not form a usable pair: ${(err as Error).message}`);
  }
  return { cert, key };
}
