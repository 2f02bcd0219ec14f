// The errors a client call rejects with. Every one is a TickdError carrying a `code`: the
// protocol's own error code when the daemon answered `ERROR <code> <message>`
// (tickd-protocol(7) ERRORS: not_found, invalid_args, auth_denied, internal, ...), or one of
// the client's codes below when there was no answer to read. Callers match the code, never
// the message, as the protocol advises.
//
// Client codes:
//   connection     no connection could be made, or it was lost while a read was pending and the
//                  client is closing or gave up reconnecting
//   maybe_applied  a write was sent and its answer lost with the connection: it may have been
//                  applied (never re-sent silently; SET and RULE SET are idempotent, re-send them
//                  if that is what you want)
//   timeout        no answer within the call's timeout (a write may still be applied: see
//                  `maybeApplied`)
//   aborted        the call's AbortSignal fired (likewise)
//   closed         the client was closed (close()) before the call could be answered
//   auth_required, auth_failed   AUTH refused: the client ends (a token does not get better
//                  by retrying)
//   protocol       a reply that is not the protocol (a wrong address, not a tickd)

export class TickdError extends Error {
  /** The protocol's error code, or the client's (see above). */
  readonly code: string;
  /** True when the request was written and it changes something: it may have taken effect. */
  readonly maybeApplied: boolean;

  constructor(code: string, message: string, maybeApplied = false, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.maybeApplied = maybeApplied;
  }

  override get name(): string {
    return this.constructor.name;
  }
}

/** The daemon answered `ERROR <code> <message>`; `detail` is the message, possibly empty. */
export class ReplyError extends TickdError {
  readonly detail: string;
  /** The command as sent, without its request id (never AUTH, so never a token). */
  readonly command: string;
  constructor(code: string, detail: string, command: string) {
    super(code, detail === '' ? code : `${code}: ${detail}`);
    this.detail = detail;
    this.command = command;
  }
}

export class ConnectionError extends TickdError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('connection', message, false, options);
  }
}

/** A write whose answer was lost with its connection: it may or may not have been applied. */
export class MaybeAppliedError extends TickdError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('maybe_applied', message, true, options);
  }
}

export class TimeoutError extends TickdError {
  constructor(message: string, maybeApplied: boolean) {
    super('timeout', message, maybeApplied);
  }
}

export class AbortError extends TickdError {
  constructor(message: string, maybeApplied: boolean, reason: unknown) {
    super('aborted', message, maybeApplied, { cause: reason });
  }
}

export class ClosedError extends TickdError {
  constructor(message = 'the client is closed', maybeApplied = false) {
    super('closed', message, maybeApplied);
  }
}

export class AuthError extends TickdError {
  constructor(code: 'auth_required' | 'auth_failed', message: string) {
    super(code, message);
  }
}

export class ProtocolError extends TickdError {
  constructor(message: string) {
    super('protocol', message);
  }
}
