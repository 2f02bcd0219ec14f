// Entry of the tickd executable (bin/tickd): argv -> help | version | --check | dump | import | ctl | run.
// Startup errors print one line `tickd: <scope>: <Name>: <message>` and exit 1; usage errors
// print the usage and exit 2 (tickd(8) EXIT STATUS).
import { parseCli, USAGE } from '../lib/cli.ts';
import { StartupError } from '../lib/errors.ts';
import { flushLog } from '../lib/log-batch.ts';
import { VERSION, zoneDatabase } from '../lib/version.ts';
import { loadStartupInputs } from '../lib/config/inputs.ts';

async function main(argv: string[]): Promise<void> {
  const action = parseCli(argv, process.env);
  switch (action.mode) {
    case 'help':
      process.stdout.write(USAGE);
      return;
    case 'version':
      process.stdout.write(`tickd ${VERSION} (time zone database ${zoneDatabase()})\n`);
      return;
    case 'usage-error':
      process.stderr.write(`tickd: ${action.message}\n${USAGE}`);
      process.exitCode = 2;
      return;
    case 'check':
      loadStartupInputs(action.config);
      process.stdout.write('configuration ok\n');
      return;
    case 'dump': {
      const { runDump } = await import('../lib/tools/dump.ts');
      process.exitCode = await runDump(action.argv, process.stdout, process.stderr);
      return;
    }
    case 'import': {
      const { runImport } = await import('../lib/tools/import.ts');
      process.exitCode = await runImport(action.argv, process.stdout, process.stderr);
      return;
    }
    case 'ctl': {
      const { runCtl } = await import('../lib/ctl/main.ts');
      process.exitCode = await runCtl(action.argv, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });
      return;
    }
    case 'run': {
      // Loaded here, not at the top: `tickd ctl` and `tickd dump` start without the daemon's modules.
      const { runPrimary } = await import('./primary.ts');
      await runPrimary(action);
      return;
    }
    default: {
      const never: never = action;
      throw new Error(`unhandled ${JSON.stringify(never)}`);
    }
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  flushLog();
  if (err instanceof StartupError) {
    process.stderr.write(`${err.line()}\n`);
  } else {
    process.stderr.write(`tickd: internal: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  process.exit(1);
});
