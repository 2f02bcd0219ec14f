// Bounding one network attempt (amqp, redis): it ends at the first of its own result, an overall
// deadline, or the pool's abort. On deadline or abort, `giveUp` tears the connection down so
// nothing lingers; whatever the abandoned work does afterwards is ignored.
export type GiveUpReason = 'timeout' | 'abort';

export function raceDeadline(
  work: Promise<boolean>,
  ms: number,
  signal: AbortSignal,
  giveUp: (reason: GiveUpReason) => void,
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const stop = (reason: GiveUpReason) => {
      if (done) return;
      try { giveUp(reason); } catch { /* teardown is best effort */ }
      finish(false);
    };
    const onAbort = () => stop('abort');
    work.then(finish, () => finish(false));
    if (signal.aborted) {
      stop('abort');
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => stop('timeout'), ms);
  });
}
