// One registry of error codes: each code's TCP reply code and HTTP status. Callers branch
// on `code`, never on message text; errors cross IPC as {code, message}.

export const ERRORS = {
  not_found: { http: 404 },
  invalid_args: { http: 400 },
  auth_required: { http: 401 },
  auth_failed: { http: 401 },
  auth_denied: { http: 403 },
  internal: { http: 500 },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorReply {
  readonly ok: false;
  readonly code: ErrorCode;
  readonly message: string;
}

export function fail(code: ErrorCode, message: string): ErrorReply {
  return { ok: false, code, message };
}

export const notFound = (kind: 'job' | 'rule' | 'schedule', id: string): ErrorReply =>
  fail('not_found', `${kind} "${id}" does not exist`);

export const invalidArgs = (message: string): ErrorReply => fail('invalid_args', message);

export const denied = (): ErrorReply => fail('auth_denied', 'insufficient namespace scope');

export const internal = (): ErrorReply => fail('internal', '');

export function httpStatus(code: ErrorCode): number {
  return ERRORS[code].http;
}

/** Startup failures (configuration, token file, listeners): the name is printed verbatim. */
export type StartupErrorName =
  | 'InvalidLogLevel' | 'FramerateOutOfRange' | 'UnknownSection' | 'UnknownKey' | 'InvalidValue'
  | 'MissingSecret' | 'EmptyNamespace' | 'DuplicateSecret' | 'ReadError' | 'ListenError' | 'LogfileError' | 'LogfileTooNew' | 'ClusterError';

export class StartupError extends Error {
  override readonly name: StartupErrorName;
  readonly scope: string;
  constructor(scope: string, name: StartupErrorName, message: string) {
    super(message);
    this.scope = scope;
    this.name = name;
  }
  /** The one stderr line: `tickd: config: InvalidValue: database.persistence must be ...`. */
  line(): string {
    return `tickd: ${this.scope}: ${this.name}: ${this.message}`;
  }
}

/** A short, single-line description of an error for log lines and messages: its message, with
 * its code before it when the message does not name it already (`ECONNREFUSED: ...`). */
export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const message = err.message || err.name;
    return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}
