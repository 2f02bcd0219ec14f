// Bearer authentication for the HTTP interface (tickd-protocol(7) HTTP INTERFACE): the same
// token table and the same constant-time check as TCP AUTH. No token table (no auth_file)
// means open access, exactly like TCP. The secret is looked at once per request and never kept.
//
// The header is read before authentication, so parsing it must cost time linear in its length
// whatever a client puts in it: string operations, no backtracking regex (a lazy group before
// trailing [ \t]* costs O(n²) on a long run of inner spaces: 110 ms for 16 000).
import type { IncomingMessage } from 'node:http';
import { authenticate, OPEN_ACCESS, type Principal, type TokenTable } from '../auth/verify.ts';

const SCHEME = 'bearer';

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';
// Characters `.` does not match: the grammar this parser replaced (/^bearer[ \t]+(.*?)[ \t]*$/i)
// had no secret for a header holding one. Node never passes CR or LF in a header value.
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * The secret of an `Authorization: Bearer <secret>` header, or null when there is none: the
 * scheme in any case, one or more spaces or tabs, then everything up to the trailing spaces and
 * tabs. Everything after the scheme is the secret: token-file secrets are free text, not b64token.
 */
export function bearerSecret(header: string | undefined): string | null {
  if (header === undefined || header.slice(0, SCHEME.length).toLowerCase() !== SCHEME) return null;
  let start = SCHEME.length;
  if (!isBlank(header[start])) return null;
  while (isBlank(header[start])) start++;
  let end = header.length;
  while (end > start && isBlank(header[end - 1])) end--;
  const secret = header.slice(start, end);
  return secret === '' || LINE_BREAK.test(secret) ? null : secret;
}

/** The caller's principal, or null when the request must be answered 401. */
export function principalOf(req: IncomingMessage, tokens: TokenTable | null): Principal | null {
  if (tokens === null) return OPEN_ACCESS;
  const secret = bearerSecret(req.headers.authorization);
  return secret === null ? null : authenticate(tokens, secret);
}
