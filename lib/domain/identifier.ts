// Identifier and pattern validation (tickd-protocol(7) "Identifiers and patterns") and
// namespace membership (tickd-protocol(7) AUTHENTICATION).
//
// Invariants: identifiers are 1..1024 bytes of ASCII letters, digits and `.` `-` `_` `:`;
// patterns use the same characters and may be empty (the catch-all). Because the set is pure
// ASCII, a valid string's length in characters equals its length in bytes. Errors are returned
// as messages naming the argument, never thrown.

export const MAX_IDENTIFIER_BYTES = 1024;

const ALLOWED = /^[A-Za-z0-9._:-]*$/;
const FIRST_DISALLOWED = /[^A-Za-z0-9._:-]/u;

/** How a rejected character is shown in a message: printable ASCII as itself, others as U+XXXX. */
export function describeChar(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp === 0x20) return 'space';
  if (cp > 0x20 && cp < 0x7f) return `'${ch}'`;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function check(what: string, s: string, allowEmpty: boolean): string | null {
  if (typeof s !== 'string') return `${what} must be a string`;
  if (s.length === 0) return allowEmpty ? null : `${what} must not be empty`;
  if (s.length > MAX_IDENTIFIER_BYTES) return `${what} too long (max ${MAX_IDENTIFIER_BYTES} bytes)`;
  if (ALLOWED.test(s)) return null;
  const bad = FIRST_DISALLOWED.exec(s)![0];
  return `${what} contains invalid character ${describeChar(bad)} (allowed: letters, digits, . - _ :)`;
}

/** null when valid, else a message naming the argument ("job identifier ..."). */
export function validateIdentifier(kind: 'job' | 'rule', s: string): string | null {
  return check(`${kind} identifier`, s, false);
}

/** null when valid (the empty pattern is valid), else a message naming the pattern. */
export function validatePattern(s: string): string | null {
  return check('pattern', s, true);
}

/** Whether an identifier (or pattern) lies inside a token's namespace: `*` is everything, else a byte prefix. */
export function inNamespace(id: string, namespace: string): boolean {
  return namespace === '*' || id.startsWith(namespace);
}
