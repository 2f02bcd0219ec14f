// The three shapes of request ctl makes, on the client library (lib/client): one answer line
// (SET, GET, REMOVE, REMOVERULE, RULE SET, SCHEDULE ...), a listing ended by `<rid> OK`
// (QUERY, LISTRULES, STAT, ATTEMPTS, SCHEDULE LIST/NEXT/HISTORY), and many single requests
// pipelined (job rm, rule rm). Each resolves with the daemon's answer as it wrote it (ctl's
// --raw prints it); a broken conversation rejects with the library's error, which
// dispatch.ts words for ctl (errors.ts, fromClientError).
import type { Client } from '../client/index.ts';
import { ReplyError } from '../client/errors.ts';
import { call, isWrite, Listing } from '../client/requests.ts';
import type { Answer } from '../client/replies.ts';

/** The address of the conversation, for messages. */
export function addrOf(client: Client): string {
  return client.endpoint?.text ?? '';
}

/** One request, one answer line. */
export function single(client: Client, text: string): Promise<Answer> {
  return call(client, text, isWrite(text), (a) => a);
}

/**
 * A listing: every line that `entry` reads is handed to `onItem`, with the line as sent, until
 * `<rid> OK` or an error; `onItem` returning false stops it (the rest is read past).
 */
export async function listing<T>(client: Client, text: string, entry: (rest: string) => T | null, onItem: (item: T, rest: string) => void | boolean): Promise<Answer> {
  const lines = new Listing(client, text, (rest) => {
    const item = entry(rest);
    return item === null ? null : { item, rest };
  });
  try {
    for await (const { item, rest } of lines) if (onItem(item, rest) === false) break;
  } catch (err) {
    if (err instanceof ReplyError) return { ok: false, code: err.code, message: err.detail };
    throw err;
  }
  return { ok: true, body: '' };
}

/** Many single requests pipelined on one connection; the answers in the order of `texts`. */
export function pipelined(client: Client, texts: readonly string[]): Promise<Answer[]> {
  return Promise.all(texts.map((t) => single(client, t)));
}
