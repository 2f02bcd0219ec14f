// Keeps telemetry memory bounded and its losses counted, whatever the collector does.
// - Admission: a span or log record enters its batch queue only while fewer than
//   MAX_QUEUE items wait there; beyond that it is dropped and counted (never blocks the
//   caller). The count of waiting items rises on admission and falls when the batch
//   processor hands a batch to the exporter, which is exactly when the items leave its queue.
// - Results: every batch handed to an exporter ends in one result; failures (HTTP errors,
//   timeouts, a full exporter concurrency limit) count the batch's items as lost.
// The SDK's own queue has the same capacity, so its silent drop path is never the one taken.

export type Signal = 'traces' | 'logs' | 'metrics';

/** Items a batch queue may hold (spans, log records). */
export const MAX_QUEUE = 2048;
/** Items per export request. */
export const MAX_BATCH = 512;

export interface SignalCounts {
  /** Items the collector acknowledged. */
  exported: number;
  /** Items in export requests that failed (error status, timeout, network). */
  failed: number;
  /** Items refused because the queue was full. */
  dropped: number;
}

/** ExportResultCode.SUCCESS of @opentelemetry/core (not a direct dependency). */
const EXPORT_SUCCESS = 0;

type ExportFn<T, R> = (items: T, done: (result: R) => void) => void;

export class ExportLedger {
  readonly counts: Record<Signal, SignalCounts> = {
    traces: { exported: 0, failed: 0, dropped: 0 },
    logs: { exported: 0, failed: 0, dropped: 0 },
    metrics: { exported: 0, failed: 0, dropped: 0 },
  };
  private readonly queued: Record<Signal, number> = { traces: 0, logs: 0, metrics: 0 };
  private reported: Record<Signal, SignalCounts> = structuredClone(this.counts);

  /** True if one more item may enter the signal's queue (it is then counted as queued). */
  admit(signal: Signal): boolean {
    if (this.queued[signal] >= MAX_QUEUE) {
      this.counts[signal].dropped++;
      return false;
    }
    this.queued[signal]++;
    return true;
  }

  waiting(signal: Signal): number {
    return this.queued[signal];
  }

  /**
   * Wraps an exporter's export() in place: items leave the queue when handed over, and the
   * result is counted. `size` gives the item count of one export call.
   */
  watch<T, R extends { code: number }>(signal: Signal, exporter: { export: ExportFn<T, R> }, size: (items: T) => number): void {
    const original = exporter.export.bind(exporter);
    exporter.export = (items, done) => {
      const n = size(items);
      this.queued[signal] = Math.max(0, this.queued[signal] - n);
      original(items, (result) => {
        if (result.code === EXPORT_SUCCESS) this.counts[signal].exported += n;
        else this.counts[signal].failed += n;
        done(result);
      });
    };
  }

  /** Losses since the previous call, or null when nothing was lost. */
  lossesSinceLastReport(): Record<Signal, { failed: number; dropped: number }> | null {
    const out = { traces: { failed: 0, dropped: 0 }, logs: { failed: 0, dropped: 0 }, metrics: { failed: 0, dropped: 0 } };
    let any = false;
    for (const signal of ['traces', 'logs', 'metrics'] as const) {
      const now = this.counts[signal];
      const before = this.reported[signal];
      out[signal] = { failed: now.failed - before.failed, dropped: now.dropped - before.dropped };
      if (out[signal].failed > 0 || out[signal].dropped > 0) any = true;
    }
    this.reported = structuredClone(this.counts);
    return any ? out : null;
  }
}
