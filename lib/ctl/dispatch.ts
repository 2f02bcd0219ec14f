// Running one command line of `tickd ctl` (from argv, or from a line typed at the prompt):
// find the command, check its arguments and options, prepare it (usage errors, exit 2, before
// any connection), then execute it on the shared connection. Errors become one stderr line
// and an exit status here (errors.ts); nothing reaches the caller as an exception.
import { readFileSync } from 'node:fs';
import { EpochClock } from '../clock.ts';
import { CTL_OPTIONS, type OptionInfo, type OptionValues, type ScannedArgs } from './args.ts';
import { findCommand, GROUPS, synopsis, type CommandInfo, type CommandName } from './command-list.ts';
import { PREPARE } from './commands.ts';
import { connect, type Client } from '../client/index.ts';
import { TickdError } from '../client/errors.ts';
import type { Ctx } from './context.ts';
import { CtlError, EXIT_DAEMON, EXIT_OK, fromClientError, UsageError } from './errors.ts';
import { connectSettings, outputFormat, useColor, type ConnectSettings, type Env } from './settings.ts';
import { Sink } from './sink.ts';
import { errorText } from '../errors.ts';

export interface CtlIo {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number; readonly rows?: number };
  readonly stderr: NodeJS.WritableStream;
  readonly env: Env;
}

/**
 * The one connection of a run (or of a whole prompt session), opened on first use: a client of
 * the library (lib/client) that never reconnects: a lost conversation ends the command, exit 3.
 */
export class Connector {
  private readonly options: OptionValues;
  private readonly env: Env;
  private settings: ConnectSettings | null = null;
  private current: Client | null = null;
  /** The address of the last conversation, for messages. */
  addr = '';

  constructor(options: OptionValues, env: Env) {
    this.options = options;
    this.env = env;
  }

  /** The connection settings (a UsageError for bad ones), read once. */
  resolve(): ConnectSettings {
    this.settings ??= connectSettings(this.options, this.env, (p) => readFileSync(p));
    return this.settings;
  }

  get timeoutMs(): number {
    return this.resolve().timeoutMs;
  }

  async client(): Promise<Client> {
    if (this.current !== null && this.current.status === 'ready') return this.current;
    this.current = await this.open();
    return this.current;
  }

  /** A connection of its own (the caller closes it). */
  async open(): Promise<Client> {
    const s = this.resolve();
    this.addr = s.endpoints.length === 1 ? s.endpoints[0]!.text : this.addr;
    const client = await connect({
      addresses: s.endpoints.map((e) => e.text),
      ...(s.tls === null ? {} : { tls: { rejectUnauthorized: !s.tls.insecure, ...(s.tls.ca === null ? {} : { ca: s.tls.ca }), ...(s.tls.servername === null ? {} : { servername: s.tls.servername }) } }),
      ...(s.token === null ? {} : { token: s.token }),
      timeout: s.timeoutMs,
      connectTimeout: s.timeoutMs,
      retryStrategy: () => null,
    });
    // Errors reach ctl through the calls they fail; the event would only repeat them.
    client.on('error', () => {});
    this.addr = client.endpoint?.text ?? this.addr;
    return client;
  }

  close(): void {
    this.current?.destroy();
    this.current = null;
  }
}

const OPTIONS = CTL_OPTIONS as Readonly<Record<string, OptionInfo>>;

function commandOf(words: readonly string[]): { info: CommandInfo & { readonly name: CommandName }; args: readonly string[] } {
  const c = findCommand(words);
  if (c === null) {
    if (GROUPS.includes(words[0]!)) {
      const what = words[1] === undefined ? `"${words[0]}" needs a command` : `no command "${words[0]} ${words[1]}"`;
      throw new UsageError(`${what} (tickd ctl help ${words[0]} lists them)`);
    }
    throw new UsageError(`no command "${words[0]}" (tickd ctl help lists them)`);
  }
  const args = words.slice(c.name.split(' ').length);
  if (args.length < c.min || args.length > c.max) {
    throw new UsageError(`${args.length < c.min ? 'missing arguments' : 'too many arguments'}: tickd ctl ${synopsis(c)}`);
  }
  return { info: c, args };
}

/** A command option given to a command that has none such, or an output it cannot make. */
function checkOptions(c: CommandInfo, opts: OptionValues): void {
  const name = c.name;
  for (const key of Object.keys(opts)) {
    if (OPTIONS[key]!.command === true && !(c.options as readonly string[]).includes(key)) throw new UsageError(`--${key} does not apply to ${name}`);
    if ((key === 'json' || key === 'raw') && !(c.formats as readonly string[]).includes(key)) throw new UsageError(`${name} has no --${key} output`);
  }
}

export interface RunOptions {
  readonly connector: Connector;
  readonly sink: Sink;
  readonly io: CtlIo;
  readonly signal: AbortSignal;
}

/** Prints an error as its one stderr line; returns the exit status. */
export function report(err: unknown, io: CtlIo): number {
  if (err instanceof CtlError) {
    io.stderr.write(`tickd ctl: ${err.message}\n`);
    return err.exit;
  }
  io.stderr.write(`tickd ctl: unexpected failure: ${errorText(err)}\n`);
  return EXIT_DAEMON;
}

/** Runs one scanned command line; returns its exit status. */
export async function runCommand(scanned: ScannedArgs, run: RunOptions): Promise<number> {
  const { io, sink } = run;
  try {
    const { info, args } = commandOf(scanned.positionals);
    checkOptions(info, scanned.options);
    const format = outputFormat(scanned.options);
    const execute = PREPARE[info.name](args, { nowNs: new EpochClock().nowNs(), options: scanned.options });
    // Bad connection settings (an unreadable token file, say) are usage errors found before connecting.
    if (info.connects) run.connector.resolve();
    const ctx: Ctx = {
      format,
      color: format === 'table' && useColor(io.stdout.isTTY, io.env),
      out: sink,
      warn: (m) => { io.stderr.write(`tickd ctl: ${m}\n`); },
      client: () => run.connector.client(),
      describe: (e) => fromClientError(e, run.connector.timeoutMs, run.connector.addr),
      open: () => run.connector.open(),
      stdin: io.stdin,
      stdoutTTY: io.stdout.isTTY === true,
      screen: () => ({ columns: io.stdout.columns ?? 80, rows: io.stdout.rows ?? 24 }),
      signal: run.signal,
      options: scanned.options,
    };
    const status = await execute(ctx);
    await sink.flush();
    return status;
  } catch (err) {
    await sink.flush();
    if (sink.broken) return EXIT_OK; // the reader went away: nothing left to say
    return report(err instanceof TickdError ? fromClientError(err, run.connector.timeoutMs, run.connector.addr) : err, io);
  }
}
