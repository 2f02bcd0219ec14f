// Bearer authentication for the HTTP interface (decisions §8): the same token table and the
// same constant-time check as TCP AUTH. No token table (no auth_file) means open access,
// exactly like TCP. The secret is looked at once per request and never kept.
import type { IncomingMessage } from 'node:http';
import { authenticate, OPEN_ACCESS, type Principal, type TokenTable } from '../auth/verify.ts';

// Everything after the scheme is the secret: token-file secrets are free text, not b64token.
const BEARER = /^bearer[ \t]+(.*?)[ \t]*$/i;

/** The secret of an `Authorization: Bearer <secret>` header, or null when there is none. */
export function bearerSecret(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = BEARER.exec(header);
  return match === null || match[1] === '' ? null : match[1]!;
}

/** The caller's principal, or null when the request must be answered 401. */
export function principalOf(req: IncomingMessage, tokens: TokenTable | null): Principal | null {
  if (tokens === null) return OPEN_ACCESS;
  const secret = bearerSecret(req.headers.authorization);
  return secret === null ? null : authenticate(tokens, secret);
}
