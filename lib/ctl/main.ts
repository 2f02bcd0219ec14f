// `tickd ctl [OPTIONS] COMMAND [ARGUMENTS]` (tickd-ctl(1)): the command-line client, entered
// from cluster/main.ts like `tickd dump`. Resolves to the exit status (errors.ts) and never
// throws: every failure is one line on stderr. stdout carries only the command's data.
import { scanArgs } from './args.ts';
import { Connector, report, runCommand, type CtlIo } from './dispatch.ts';
import { EXIT_DAEMON, EXIT_OK, UsageError } from './errors.ts';
import { helpFor } from './help.ts';
import { runRepl } from './repl.ts';
import { Sink } from './sink.ts';
import { errorText } from '../errors.ts';

export type { CtlIo };

/** A bug that escaped every handler still ends in one line, never a stack trace (left in place to the end of the process). */
function lastResort(io: CtlIo): (err: unknown) => void {
  return (err) => {
    io.stderr.write(`tickd ctl: unexpected failure: ${errorText(err)}\n`);
    process.exit(EXIT_DAEMON);
  };
}

export async function runCtl(argv: readonly string[], io: CtlIo & { readonly signal?: AbortSignal }): Promise<number> {
  const crash = lastResort(io);
  process.on('unhandledRejection', crash);
  process.on('uncaughtException', crash);
  const sink = new Sink(io.stdout);
  let connector: Connector | null = null;
  const controller = new AbortController();
  const interrupt = (): void => controller.abort();
  io.signal?.addEventListener('abort', interrupt);
  try {
    const scanned = scanArgs(argv);
    if (scanned.options.help === true) {
      sink.write(helpFor(scanned.positionals));
      await sink.flush();
      return EXIT_OK;
    }
    connector = new Connector(scanned.options, io.env);
    if (scanned.positionals.length === 0) {
      if (io.stdin.isTTY === true && io.stdout.isTTY === true) return await runRepl(io, connector);
      throw new UsageError('no command given (tickd ctl help lists them; the interactive prompt needs a terminal)');
    }
    // Ctrl-C ends a watch with status 0; any other command keeps the default (it stops at once).
    const watching = scanned.positionals[0] === 'watch' && io.signal === undefined;
    if (watching) process.on('SIGINT', interrupt);
    try {
      return await runCommand(scanned, { connector, sink, io, signal: controller.signal });
    } finally {
      if (watching) process.off('SIGINT', interrupt);
    }
  } catch (err) {
    return report(err, io);
  } finally {
    io.signal?.removeEventListener('abort', interrupt);
    connector?.close();
  }
}
