// The three shapes of request ctl makes over a Client: one answer line (SET, GET, REMOVE,
// REMOVERULE, RULE SET), a list ended by `<rid> OK` (QUERY, LISTRULES, STAT), and many single
// requests pipelined (job rm, rule rm). Each resolves with the daemon's answer; a broken
// conversation rejects with its ConnectionError (exit 3).
import type { Client } from './connection.ts';
import { ConnectionError } from './errors.ts';
import { parseAnswer, type Answer } from './replies.ts';

function notProtocol(client: Client, rest: string): ConnectionError {
  return new ConnectionError(`unexpected reply from ${client.endpoint.text}: ${JSON.stringify(rest.slice(0, 80))}`);
}

/** One request, one answer line. */
export function single(client: Client, text: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    client.request(text, {
      line: (rest) => {
        const a = parseAnswer(rest);
        if (a === null) reject(notProtocol(client, rest));
        else resolve(a);
        return true;
      },
      fail: reject,
    });
  });
}

/**
 * A listing: every line that `entry` reads is handed to `onItem`, until `<rid> OK` or an error.
 * `OK` alone is tested first and entries next, so that an entry named OK or ERROR is an entry.
 */
export function listing<T>(client: Client, text: string, entry: (rest: string) => T | null, onItem: (item: T, rest: string) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    client.request(text, {
      line: (rest) => {
        if (rest === 'OK') {
          resolve({ ok: true, body: '' });
          return true;
        }
        const item = entry(rest);
        if (item !== null) {
          onItem(item, rest);
          return false;
        }
        const a = parseAnswer(rest);
        if (a !== null && !a.ok) resolve(a);
        else reject(notProtocol(client, rest));
        return true;
      },
      fail: reject,
    });
  });
}

/** Many single requests pipelined on one connection; the answers in the order of `texts`. */
export async function pipelined(client: Client, texts: readonly string[]): Promise<Answer[]> {
  const answers = texts.map((t) => single(client, t));
  await client.drained();
  return Promise.all(answers);
}
