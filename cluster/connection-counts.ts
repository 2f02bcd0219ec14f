// STAT `connections`: the open TCP connections across all workers. Each worker reports its own
// count when it changes (at most once per turn); a worker that exits takes its count with it.
export class ConnectionCounts {
  private readonly byWorker = new Map<number, number>();

  set(workerId: number, count: number): void {
    this.byWorker.set(workerId, count);
  }

  delete(workerId: number): void {
    this.byWorker.delete(workerId);
  }

  readonly total = (): number => {
    let n = 0;
    for (const c of this.byWorker.values()) n += c;
    return n;
  };
}
