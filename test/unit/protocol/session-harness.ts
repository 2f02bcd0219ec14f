// A Session with a fake transport and a fake dispatch (no sockets): dispatch only records
// commands, and tests answer them when they choose; the transport records writes, reading
// state (paused or not) and a backlog the test sets.
import { Session, type RequestInfo } from '../../../lib/protocol/session.ts';
import { buildTokenTable } from '../../../lib/auth/verify.ts';
import type { Command, Reply } from '../../../lib/domain/command.ts';

export const TOKENS = buildTokenTable([
  { name: 'a', secret: 'secret-a', namespace: 'a.' },
  { name: 'admin', secret: 'secret-admin', namespace: '*' },
]);

export const DONE: Reply = { ok: true, kind: 'done' };

export interface Pending {
  readonly cmd: Command;
  readonly answer: (reply: Reply) => void;
}

export function harness(tokens: typeof TOKENS | null) {
  const out: string[] = [];
  const pending: Pending[] = [];
  const requests: RequestInfo[] = [];
  let closes = 0;
  let paused = false;
  let backlog = 0;
  const session = new Session({
    tokens,
    dispatch: (cmd, cb) => { pending.push({ cmd, answer: cb }); },
    transport: {
      write: (t) => { out.push(t); },
      backlog: () => backlog,
      pause: () => { paused = true; },
      resume: () => { paused = false; },
      close: () => { closes++; },
    },
    onRequest: (info) => requests.push(info),
  });
  return {
    session,
    pending,
    requests,
    feed: (text: string | Buffer) => session.feed(typeof text === 'string' ? Buffer.from(text) : text),
    /** Everything written so far, as one string. */
    written: () => out.join(''),
    /** How many transport writes were made. */
    get writes() { return out.length; },
    get closes() { return closes; },
    /** Whether the session has asked the transport to stop reading. */
    get paused() { return paused; },
    /** Sets the bytes the fake socket has not taken yet. */
    setBacklog(bytes: number) { backlog = bytes; },
  };
}

/** Lets queued microtasks (the session's deferred flush) run. */
export const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
