// Redacting credentials before anything reaches a log line (tickd-protocol(7) RUNNERS:
// "Credentials never appear in logs"). Used for redis URLs and amqp DSNs alike.
//
// Invariant: the output never contains the userinfo of the input. A URL that cannot be parsed
// is not echoed at all (a malformed one could still hold a password somewhere).

/**
 * `redis://user:pw@host:6379/3?x=1` -> `redis://***@host:6379/3`; unparsable -> `<unparsable URL>`.
 */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '<unparsable URL>';
  }
  // Rebuild from the parts rather than editing the text. The query is dropped too: neither
  // format has one, and `?password=` is a common habit elsewhere.
  const userinfo = url.username !== '' || url.password !== '' ? '***@' : '';
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}`;
}

/** Replaces every occurrence of each non-empty secret in `text` (for error messages). */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}
