// Bounding one network attempt (amqp, redis): it ends at the first of its own outcome, an
// overall deadline, or the pool's abort. On deadline or abort, `giveUp` tears the connection
// down so nothing lingers; whatever the abandoned work does afterwards is ignored. The outcome
// is then `aborted`, or a broker error saying no answer came in time.
import type { AttemptOutcome } from '../domain/attempt.ts';
import { ABORTED } from './execution.ts';

export type GiveUpReason = 'timeout' | 'abort';

export function raceDeadline(
  work: Promise<AttemptOutcome>,
  ms: number,
  signal: AbortSignal,
  giveUp: (reason: GiveUpReason) => void,
): Promise<AttemptOutcome> {
  return new Promise<AttemptOutcome>((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: AttemptOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const stop = (reason: GiveUpReason) => {
      if (done) return;
      try { giveUp(reason); } catch { /* teardown is best effort */ }
      finish(reason === 'abort' ? ABORTED : { kind: 'broker_error', error: `no answer within ${ms} ms` });
    };
    const onAbort = () => stop('abort');
    work.then(finish, () => finish({ kind: 'runner_error', error: 'the attempt failed unexpectedly' }));
    if (signal.aborted) {
      stop('abort');
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => stop('timeout'), ms);
  });
}
