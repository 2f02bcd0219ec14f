// Command-line parsing (tickd(8) SYNOPSIS, OPTIONS). Pure: returns what to do, or a usage
// error; main decides how to act on it.
import { parseArgs } from 'node:util';
import { availableParallelism } from 'node:os';

export type CliAction =
  | { readonly mode: 'run'; readonly config: string | null; readonly workers: number; readonly pidfile: string | null; readonly maxInflight: number; readonly tickSliceUs: number }
  | { readonly mode: 'check'; readonly config: string | null }
  | { readonly mode: 'dump'; readonly argv: string[] }
  | { readonly mode: 'version' }
  | { readonly mode: 'help' }
  | { readonly mode: 'usage-error'; readonly message: string };

export const USAGE = `Usage:
  tickd [-c FILE] [-w N] [--pidfile FILE] [--max-inflight N] [--tick-slice US]
                               run the daemon in the foreground
  tickd --check [-c FILE]      validate the configuration and token file, then exit
  tickd dump LOGFILE [--format text|json] [--compact] [--follow]
  tickd --version | --help

Options:
  -c, --config FILE      configuration file (TOML); without it every default applies
  -w, --workers N        connection worker processes (default: CPU count, at least 1)
      --pidfile FILE     write the primary's pid once listeners are bound; removed at exit
      --max-inflight N   executions running at once (default 256); more wait in a queue
      --tick-slice US    the tick thread's scheduler slice in microseconds, 100 to 100000
                         (default 100, Linux 6.12+); 0 keeps the kernel's default
      --check            validate configuration and exit 0 printing "configuration ok"
  -V, --version          print the version
  -h, --help             print this help
`;

export const DEFAULT_MAX_INFLIGHT = 256;
/** The kernel's smallest scheduler slice (sched_setattr's sched_runtime), in microseconds. */
export const MIN_SLICE_US = 100;
/** The kernel's largest slice, in microseconds. */
export const MAX_SLICE_US = 100_000;
export const DEFAULT_TICK_SLICE_US = MIN_SLICE_US;

export function parseCli(argv: readonly string[]): CliAction {
  if (argv[0] === 'dump') return { mode: 'dump', argv: argv.slice(1) };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string', short: 'c' },
        workers: { type: 'string', short: 'w' },
        pidfile: { type: 'string' },
        'max-inflight': { type: 'string' },
        'tick-slice': { type: 'string' },
        check: { type: 'boolean' },
        version: { type: 'boolean', short: 'V' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return { mode: 'usage-error', message: (err as Error).message };
  }
  const v = parsed.values;
  if (v.help) return { mode: 'help' };
  if (v.version) return { mode: 'version' };
  const config = v.config ?? null;
  if (config === '') return { mode: 'usage-error', message: 'option -c/--config needs a file name' };
  if (v.check) return { mode: 'check', config };
  const workers = v.workers === undefined ? Math.max(1, availableParallelism()) : positiveInt(v.workers);
  if (workers === null) return { mode: 'usage-error', message: `--workers must be a positive integer, got "${v.workers}"` };
  const maxInflight = v['max-inflight'] === undefined ? DEFAULT_MAX_INFLIGHT : positiveInt(v['max-inflight']);
  if (maxInflight === null) return { mode: 'usage-error', message: `--max-inflight must be a positive integer, got "${v['max-inflight']}"` };
  const tickSliceUs = v['tick-slice'] === undefined ? DEFAULT_TICK_SLICE_US : sliceUs(v['tick-slice']);
  if (tickSliceUs === null) return { mode: 'usage-error', message: `--tick-slice must be 0 or ${MIN_SLICE_US} to ${MAX_SLICE_US} microseconds, got "${v['tick-slice']}"` };
  return { mode: 'run', config, workers, pidfile: v.pidfile ?? null, maxInflight, tickSliceUs };
}

function sliceUs(text: string): number | null {
  if (!/^\d{1,6}$/.test(text)) return null;
  const n = Number(text);
  return n === 0 || (n >= MIN_SLICE_US && n <= MAX_SLICE_US) ? n : null;
}

function positiveInt(text: string): number | null {
  if (!/^\d{1,6}$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 ? n : null;
}
