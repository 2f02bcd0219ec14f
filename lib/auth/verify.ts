// The one authentication check, shared by the TCP session and the HTTP bearer middleware.
// Secrets are compared in constant time across ALL tokens: every candidate is hashed to a
// fixed length and compared with timingSafeEqual, with no early exit and no lookup keyed by
// the secret, so timing reveals neither which token matched nor how much of a secret did.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TokenEntry } from '../config/tokens.ts';

/** What a connection keeps after a successful AUTH: never the secret. */
export interface Principal {
  readonly name: string;
  readonly namespace: string;
}

export interface TokenTable {
  readonly entries: ReadonlyArray<{ readonly digest: Buffer; readonly principal: Principal }>;
}

const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

export function buildTokenTable(tokens: readonly TokenEntry[]): TokenTable {
  return { entries: tokens.map((t) => ({ digest: digest(t.secret), principal: { name: t.name, namespace: t.namespace } })) };
}

export function authenticate(table: TokenTable, secret: string): Principal | null {
  const candidate = digest(secret);
  let found: Principal | null = null;
  for (const entry of table.entries) {
    // Every entry is compared, even after a match: the work done does not depend on which
    // entry (if any) matched. Keeping the first match is an ordinary conditional on the result,
    // a difference of a few instructions, far below what a network round trip can resolve.
    const equal = timingSafeEqual(candidate, entry.digest);
    found = equal && found === null ? entry.principal : found;
  }
  return found;
}

/** The full-access principal used when no auth_file is configured. */
export const OPEN_ACCESS: Principal = { name: '', namespace: '*' };
