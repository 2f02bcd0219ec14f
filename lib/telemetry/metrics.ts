// The primary's metrics in the Prometheus text format (GET /metrics in
// tickd-protocol(7) HTTP INTERFACE; tickd.toml(5) [telemetry] lists the metrics). The text is produced by the
// OpenTelemetry Prometheus exporter's serializer from a MetricReader that is read on demand,
// one reader among those of the process's single MeterProvider: with OTLP export enabled the
// periodic exporter reads the same instruments, so both show the same values (both are
// cumulative). Loaded with `await import()` only, like otel.ts: by the primary when OTLP export
// is enabled (through otel.ts) or when the HTTP interface is (startMetricsOnly).
//
// Invariants:
// - A scrape never throws: a failed collection answers a comment line saying so.
// - Without OTLP export (startMetricsOnly) the MeterProvider has the pull reader alone: nothing
//   is exported anywhere and no timer runs; the instruments cost what they cost with export.
import { MetricReader, MeterProvider } from '@opentelemetry/sdk-metrics';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from '../log.ts';
import { createInstruments, type InstrumentSources, type JobInstruments } from './instruments.ts';
import { errorText } from '../errors.ts';

/** The instrumentation scope of every tickd instrument, span and log record. */
export const SCOPE = 'tickd';
/** A scrape's collection gives up after this long (observable callbacks are synchronous here). */
const COLLECT_TIMEOUT_MS = 5000;

/** service.name and service.version over the SDK's defaults: the resource of every signal. */
export function tickdResource(serviceName: string, serviceVersion: string): Resource {
  return defaultResource().merge(resourceFromAttributes({
    [ATTR_SERVICE_NAME]: serviceName,
    [ATTR_SERVICE_VERSION]: serviceVersion,
  }));
}

/** A MetricReader collected only when asked (cumulative temporality, default aggregations). */
class PullReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface PrometheusPull {
  /** Register it with the MeterProvider. */
  readonly reader: MetricReader;
  /** The current values in the Prometheus text exposition format. */
  scrape(): Promise<string>;
}

export function prometheusPull(log: Logger): PrometheusPull {
  const reader = new PullReader();
  // The exporter's defaults: no prefix, no timestamps, scope labels and target_info included.
  const serializer = new PrometheusSerializer();
  return {
    reader,
    async scrape() {
      try {
        const { resourceMetrics, errors } = await reader.collect({ timeoutMillis: COLLECT_TIMEOUT_MS });
        if (errors.length > 0) log.debug({ errors: errors.map(String) }, 'metrics collection reported errors');
        return serializer.serialize(resourceMetrics);
      } catch (err) {
        log.warn({ err: errorText(err) }, 'metrics collection failed');
        return '# metrics collection failed\n';
      }
    },
  };
}

/** What the primary needs of its metrics: the instruments, and GET /metrics's text. */
export interface PrimaryMeters {
  instruments(sources: InstrumentSources): JobInstruments;
  /** null when /metrics is not served (no HTTP interface). */
  readonly scrape: (() => Promise<string>) | null;
  shutdown(timeoutMs: number): Promise<void>;
}

export interface MetricsOnlyOptions {
  readonly serviceName: string;
  readonly serviceVersion: string;
  readonly log: Logger;
}

/** Instruments read by GET /metrics alone: OTLP export is disabled, the HTTP interface is on. */
export function startMetricsOnly(opts: MetricsOnlyOptions): PrimaryMeters {
  const pull = prometheusPull(opts.log.child({ component: 'telemetry' }));
  const provider = new MeterProvider({ resource: tickdResource(opts.serviceName, opts.serviceVersion), readers: [pull.reader] });
  const meter = provider.getMeter(SCOPE, opts.serviceVersion);
  return {
    instruments: (sources) => createInstruments(meter, sources),
    scrape: () => pull.scrape(),
    shutdown: async () => { await provider.shutdown().catch(() => {}); },
  };
}
