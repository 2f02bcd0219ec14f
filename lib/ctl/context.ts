// What a command gets to run with, and the two halves every command has: `prepare` reads and
// checks the arguments (a UsageError, exit 2, before anything connects) and returns `execute`,
// which talks to the daemon and prints.
import type { OptionValues } from './args.ts';
import type { Client } from '../client/index.ts';
import type { TickdError } from '../client/errors.ts';
import { DaemonError, type CtlError } from './errors.ts';
import type { Answer } from '../client/replies.ts';
import type { OutputFormat } from './settings.ts';
import type { Sink } from './sink.ts';

export interface Ctx {
  readonly format: OutputFormat;
  /** Colour statuses (a terminal, NO_COLOR unset). */
  readonly color: boolean;
  readonly out: Sink;
  /** One diagnostic line on stderr, prefixed `tickd ctl: `. */
  readonly warn: (message: string) => void;
  /** Connects on first use, the same conversation after. */
  client(): Promise<Client>;
  /** A client library error in ctl's words and exit status (errors.ts, fromClientError). */
  readonly describe: (err: TickdError) => CtlError;
  /** Another connection to the same daemon, for the caller to close (import's parallel ones). */
  open(): Promise<Client>;
  readonly stdin: NodeJS.ReadableStream;
  /** stdout is a terminal (watch redraws in place). */
  readonly stdoutTTY: boolean;
  /** stdout's size when it is a terminal. */
  readonly screen: () => { readonly columns: number; readonly rows: number };
  /** Aborted by Ctrl-C (SIGINT): long-running commands stop and exit 0. */
  readonly signal: AbortSignal;
  readonly options: OptionValues;
}

export interface PrepareInput {
  /** The instant relative times count from: one per command, so a whole import shares it. */
  readonly nowNs: bigint;
  readonly options: OptionValues;
}

export type Execute = (ctx: Ctx) => Promise<number>;
export type Prepare = (args: readonly string[], input: PrepareInput) => Execute;

/** The answer's value, or a DaemonError (exit 1) carrying its code. */
export function expectOk(a: Answer): string {
  if (!a.ok) throw new DaemonError(a.code, a.message);
  return a.body;
}
