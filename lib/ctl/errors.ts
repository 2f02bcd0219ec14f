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
