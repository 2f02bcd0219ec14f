// The exit statuses of `tickd ctl` (tickd-ctl(1) EXIT STATUS) and the errors that carry them.
// A command never throws anything else to main.ts on purpose; whatever does is reported in one
// line with status 1, never as a stack trace.
//
//   0  success
//   1  the daemon answered an error (its code is printed), or an import had lines that failed
//   2  usage: unknown command or option, bad argument, bad WHEN, unreadable token file
//   3  no conversation: cannot connect, TLS or AUTH failed, timed out, connection lost
//
// Messages never hold the token: it is read from the environment or a file and only ever
// written to the socket.
import { ReplyError, TickdError } from '../client/errors.ts';

export const EXIT_OK = 0;
export const EXIT_DAEMON = 1;
export const EXIT_USAGE = 2;
export const EXIT_CONNECTION = 3;

export type ExitStatus = typeof EXIT_OK | typeof EXIT_DAEMON | typeof EXIT_USAGE | typeof EXIT_CONNECTION;

export class CtlError extends Error {
  readonly exit: ExitStatus;
  constructor(exit: ExitStatus, message: string) {
    super(message);
    this.exit = exit;
  }
}

/** Bad command line or input: exit 2. */
export class UsageError extends CtlError {
  constructor(message: string) {
    super(EXIT_USAGE, message);
  }
}

/** Cannot connect, TLS, AUTH, timeout, lost connection, a reply that is not the protocol: exit 3. */
export class ConnectionError extends CtlError {
  constructor(message: string) {
    super(EXIT_CONNECTION, message);
  }
}

/** The daemon answered `ERROR <code> <message>`: exit 1. */
export class DaemonError extends CtlError {
  readonly code: string;
  readonly detail: string;
  constructor(code: string, detail: string) {
    super(EXIT_DAEMON, detail === '' ? code : `${code}: ${detail}`);
    this.code = code;
    this.detail = detail;
  }
}

/**
 * A client library error (lib/client/errors.ts) as ctl says it: the daemon's answer exits 1,
 * anything else 3, in ctl's words (its options named where the library's are).
 */
export function fromClientError(err: TickdError, timeoutMs: number, addr: string): CtlError {
  if (err instanceof ReplyError) return new DaemonError(err.code, err.detail);
  const e = err.code === 'maybe_applied' && err.cause instanceof TickdError ? err.cause : err;
  if (e.code === 'timeout') return new ConnectionError(`no answer from ${addr} within ${timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}`);
  const message = e.message
    .replace(/^connection to (\S+) closed/, 'connection to $1 closed before the answer')
    .replace(' (before any reply: a TLS listener?)', ' (a TLS listener? try --tls)')
    .replace('(give the CA)', '(give the CA with --cacert)')
    .replace('give a token (auth_required)', 'give a token with --token-file or TICKD_TOKEN (auth_required)');
  return new ConnectionError(message);
}
