// Front doors of the span and log batch queues: each item asks the ExportLedger for a
// place before the SDK batch processor behind sees it (see bounded.ts for the invariant).
import type { Context } from '@opentelemetry/api';
import type { LogRecordProcessor, ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ExportLedger } from './bounded.ts';

export class BoundedSpanProcessor implements SpanProcessor {
  private readonly inner: SpanProcessor;
  private readonly ledger: ExportLedger;

  constructor(inner: SpanProcessor, ledger: ExportLedger) {
    this.inner = inner;
    this.ledger = ledger;
  }

  onStart(span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (this.ledger.admit('traces')) this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export class BoundedLogProcessor implements LogRecordProcessor {
  private readonly inner: LogRecordProcessor;
  private readonly ledger: ExportLedger;

  constructor(inner: LogRecordProcessor, ledger: ExportLedger) {
    this.inner = inner;
    this.ledger = ledger;
  }

  onEmit(logRecord: ReadWriteLogRecord, context?: Context): void {
    if (this.ledger.admit('logs')) this.inner.onEmit(logRecord, context);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
