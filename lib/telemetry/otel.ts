// OpenTelemetry export over OTLP/HTTP (JSON) for one process: the resource, the three
// exporters, the batch pipelines and their shutdown. This is the ONLY entry point to the
// telemetry code: callers load it with `await import()` when [telemetry] enabled is true, so
// a daemon without telemetry never loads an OpenTelemetry module. Each process (primary,
// every worker) starts its own; no global OTel state is registered (providers are used
// directly), so nothing else in the process is affected.
//
// Guarantees against a collector that is down, slow or failing (see bounded.ts):
// - recording is synchronous and O(1); nothing on a command's or a job's path waits on I/O;
// - queues hold at most MAX_QUEUE spans and MAX_QUEUE log records; at most CONCURRENCY
//   requests per signal are in flight, each abandoned after the export timeout; metrics
//   are aggregated in place (no queue); losses are counted and reported at most once a minute;
// - shutdown() settles within the time given, flushed or not.
// - With `prometheus`, the MeterProvider has a second reader, read by GET /metrics (metrics.ts):
//   one set of instruments, two readers, the same values.
import type { Meter, Tracer } from '@opentelemetry/api';
import { createNoopMeter } from '@opentelemetry/api';
import type { Logger as OtelLogger } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MAX_TIMER_MS } from '../clock.ts';
import type { Logger } from '../log.ts';
import { ExportLedger, MAX_BATCH, MAX_QUEUE } from './bounded.ts';
import { createInstruments, type InstrumentSources, type JobInstruments } from './instruments.ts';
import { createLogBridge, MAX_ATTRIBUTE_TEXT, type BunyanRawStream } from './log-bridge.ts';
import { prometheusPull, SCOPE, tickdResource, type PrimaryMeters } from './metrics.ts';
import { BoundedLogProcessor, BoundedSpanProcessor } from './processors.ts';
import { createRequestSpans, type RequestSpans } from './spans.ts';

const MIN_INTERVAL_MS = 10;
/** Per HTTP request, retries included. */
const MIN_EXPORT_TIMEOUT_MS = 1000;
const MAX_EXPORT_TIMEOUT_MS = 10_000;
/** Export requests in flight per signal; beyond it a batch fails at once (and is counted). */
const CONCURRENCY = 4;
const SPAN_ATTRIBUTE_LENGTH = 256;
const LOSS_REPORT_MS = 60_000;

export interface TelemetryOptions {
  /** Collector base URL; signals go to <endpoint>/v1/{metrics,traces,logs}. */
  readonly endpoint: string;
  readonly serviceName: string;
  readonly serviceVersion: string;
  readonly flushIntervalMs: number;
  /** False in connection workers: they record spans and logs only. */
  readonly metrics: boolean;
  /** With metrics: also a reader for GET /metrics (the primary, when HTTP is configured). */
  readonly prometheus?: boolean;
  /** The process logger; this module's own reports go to its child `telemetry` (never exported). */
  readonly log: Logger;
}

export interface Telemetry extends PrimaryMeters {
  readonly tracer: Tracer;
  readonly meter: Meter;
  readonly otelLogger: OtelLogger;
  readonly ledger: ExportLedger;
  /** The primary's instruments (call once). */
  instruments(sources: InstrumentSources): JobInstruments;
  /** Records the span of one answered TCP request; returns its ids for log correlation. */
  readonly requestSpan: RequestSpans;
  /**
   * A bunyan stream for logger.addStream(): records at warn and above, or at the logger's
   * own level (`logger.level()`) if that is higher, so `level = "error"` exports errors only.
   */
  logStream(loggerLevel: number): { type: 'raw'; level: number; stream: BunyanRawStream };
  /** Flushes what is pending and stops; resolves within `timeoutMs` whatever the collector does. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** <endpoint>/v1/<signal>, keeping any base path and query of the endpoint. */
export function signalUrl(endpoint: string, signal: 'metrics' | 'traces' | 'logs'): string {
  const url = new URL(endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/${signal}`;
  return url.toString();
}

export function startTelemetry(opts: TelemetryOptions): Telemetry {
  const log = opts.log.child({ component: 'telemetry' });
  const intervalMs = clamp(opts.flushIntervalMs, MIN_INTERVAL_MS, MAX_TIMER_MS);
  const exportTimeoutMs = clamp(intervalMs, MIN_EXPORT_TIMEOUT_MS, MAX_EXPORT_TIMEOUT_MS);
  const resource = tickdResource(opts.serviceName, opts.serviceVersion);
  const ledger = new ExportLedger();
  const exporterOptions = (signal: 'metrics' | 'traces' | 'logs') => ({
    url: signalUrl(opts.endpoint, signal),
    timeoutMillis: exportTimeoutMs,
    concurrencyLimit: CONCURRENCY,
  });
  const batchOptions = { maxQueueSize: MAX_QUEUE, maxExportBatchSize: MAX_BATCH, scheduledDelayMillis: intervalMs, exportTimeoutMillis: exportTimeoutMs };

  const spanExporter = new OTLPTraceExporter(exporterOptions('traces'));
  ledger.watch('traces', spanExporter, (spans) => spans.length);
  const tracerProvider = new BasicTracerProvider({
    resource,
    sampler: new AlwaysOnSampler(),
    spanLimits: { attributeValueLengthLimit: SPAN_ATTRIBUTE_LENGTH, attributeCountLimit: 16 },
    spanProcessors: [new BoundedSpanProcessor(new BatchSpanProcessor(spanExporter, batchOptions), ledger)],
  });

  const logExporter = new OTLPLogExporter(exporterOptions('logs'));
  ledger.watch('logs', logExporter, (records) => records.length);
  const loggerProvider = new LoggerProvider({
    resource,
    logRecordLimits: { attributeCountLimit: 64, attributeValueLengthLimit: MAX_ATTRIBUTE_TEXT },
    processors: [new BoundedLogProcessor(new BatchLogRecordProcessor({ exporter: logExporter, ...batchOptions }), ledger)],
  });

  let meterProvider: MeterProvider | null = null;
  let scrape: (() => Promise<string>) | null = null;
  if (opts.metrics) {
    const metricExporter = new OTLPMetricExporter(exporterOptions('metrics'));
    ledger.watch('metrics', metricExporter, countDataPoints);
    const readers: MetricReader[] = [new PeriodicExportingMetricReader({
      exporter: metricExporter,
      exportIntervalMillis: intervalMs,
      exportTimeoutMillis: Math.min(exportTimeoutMs, intervalMs),
    })];
    if (opts.prometheus === true) {
      const pull = prometheusPull(log);
      readers.push(pull.reader);
      scrape = () => pull.scrape();
    }
    meterProvider = new MeterProvider({ resource, readers });
  }

  const lossReport = setInterval(() => reportLosses(ledger, log), LOSS_REPORT_MS);
  lossReport.unref();

  const tracer = tracerProvider.getTracer(SCOPE, opts.serviceVersion);
  const meter = meterProvider?.getMeter(SCOPE, opts.serviceVersion) ?? createNoopMeter();
  const otelLogger = loggerProvider.getLogger(SCOPE, opts.serviceVersion);
  let stopping: Promise<void> | null = null;

  return {
    tracer,
    meter,
    otelLogger,
    ledger,
    instruments: (sources) => createInstruments(meter, sources),
    scrape,
    requestSpan: createRequestSpans(tracer),
    logStream: (loggerLevel) => ({ type: 'raw', level: Math.max(WARN_LEVEL, loggerLevel), stream: createLogBridge(otelLogger) }),
    shutdown(timeoutMs) {
      stopping ??= (async () => {
        clearInterval(lossReport);
        const flushed = Promise.allSettled([
          tracerProvider.shutdown(),
          loggerProvider.shutdown(),
          meterProvider?.shutdown({ timeoutMillis: timeoutMs }),
        ]);
        const outcome = await withDeadline(flushed, timeoutMs);
        reportLosses(ledger, log);
        if (outcome === 'timeout') log.warn({ timeoutMs }, 'telemetry not flushed in time; pending data dropped');
      })();
      return stopping;
    },
  };
}

/** bunyan's warn. */
const WARN_LEVEL = 40;

function countDataPoints(metrics: ResourceMetrics): number {
  let n = 0;
  for (const scope of metrics.scopeMetrics) for (const metric of scope.metrics) n += metric.dataPoints.length;
  return n;
}

function reportLosses(ledger: ExportLedger, log: Logger): void {
  const losses = ledger.lossesSinceLastReport();
  if (losses !== null) log.warn({ losses, totals: ledger.counts }, 'telemetry export is losing data (collector down, slow or failing)');
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.trunc(value)));
}

function withDeadline(work: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), Math.max(0, ms));
    work.then(() => { clearTimeout(timer); resolve('done'); });
  });
}
