// Folds run in the test's own process (lib/logfile/folds.ts): the compactor's logic without the
// compaction child around it, so logfile unit tests start no process. cancel() rejects the
// run at once, as the child's would; the abandoned fold may still finish writing its output,
// which the compactor removes or ignores (as it does when the child is killed mid-write).
import { foldLogfile } from '../../lib/logfile/fold.ts';
import type { FoldRunner, Folds } from '../../lib/logfile/folds.ts';

export function inProcessFolds(wrap: (run: FoldRunner) => FoldRunner = (run) => run): Folds {
  const run: FoldRunner = (src, dst) => {
    let cancel!: () => void;
    const cancelled = new Promise<never>((_, reject) => { cancel = () => reject(new Error('fold cancelled')); });
    return { result: Promise.race([foldLogfile(src, dst), cancelled]), cancel };
  };
  return { run: wrap(run), close: async () => {} };
}
