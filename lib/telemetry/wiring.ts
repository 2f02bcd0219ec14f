// The seam between a process role (cluster/primary.ts, cluster/worker.ts) and telemetry.
// Invariant: this file, like instruments.ts, imports OpenTelemetry only as types; the SDK is
// loaded by the dynamic imports below, so with [telemetry] enabled = false and no [http]
// listen no OpenTelemetry module is ever loaded (test/integration/telemetry.test.ts,
// "disabled", checks the imports). With the HTTP interface on, the primary loads the metrics
// SDK alone, for GET /metrics (metrics.ts), whether or not OTLP export is enabled.
import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import type { Telemetry } from './otel.ts';
import type { PrimaryMeters } from './metrics.ts';
import type { RequestSpanInfo } from './spans.ts';

export type { Telemetry, PrimaryMeters };

/** Bound on the flush at shutdown: pending telemetry is given this long, then dropped. */
export const TELEMETRY_FLUSH_MS = { primary: 2000, worker: 1000 } as const;

/**
 * Starts this process's exporters when telemetry is enabled (null otherwise) and adds the
 * log bridge to `log`. Call right after creating the process logger: bunyan children made
 * earlier with their own level would not see the new stream.
 */
export async function loadTelemetry(config: Config, log: Logger, role: 'primary' | 'worker', version: string): Promise<Telemetry | null> {
  const { enabled, endpoint, service_name, flush_interval_ms } = config.telemetry;
  if (!enabled || endpoint === null) return null;
  const { startTelemetry } = await import('./otel.ts');
  const telemetry = startTelemetry({
    endpoint,
    serviceName: service_name,
    serviceVersion: version,
    flushIntervalMs: flush_interval_ms,
    metrics: role === 'primary', // job, rule and connection state lives in the primary
    prometheus: role === 'primary' && config.http.listen !== null,
    log,
  });
  log.addStream(telemetry.logStream(log.level()));
  return telemetry;
}

/**
 * The primary's instruments: those of `telemetry` when OTLP export is on (GET /metrics reads
 * the same MeterProvider); without export, a MeterProvider read by GET /metrics alone when the
 * HTTP interface is on; otherwise none (null), and nothing is loaded.
 */
export async function loadPrimaryMeters(config: Config, log: Logger, telemetry: Telemetry | null, version: string): Promise<PrimaryMeters | null> {
  if (telemetry !== null) return telemetry;
  if (config.http.listen === null) return null;
  const { startMetricsOnly } = await import('./metrics.ts');
  return startMetricsOnly({ serviceName: config.telemetry.service_name, serviceVersion: version, log });
}

/**
 * The TCP listener's per-request callback in a worker: records the request span, and logs a
 * failed AUTH (never the secret) tied to that span so the exported warning carries its trace.
 */
export function requestHook(log: Logger, telemetry: Telemetry | null): (info: RequestSpanInfo) => void {
  return (info) => {
    const span = telemetry?.requestSpan(info);
    if (info.instruction === 'AUTH' && !info.success) log.warn({ ...span }, 'authentication failed');
  };
}
