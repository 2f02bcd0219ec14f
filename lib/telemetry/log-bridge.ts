// A bunyan raw stream that forwards warn-and-above records to the OpenTelemetry Logs API
// (tickd.toml(5) [telemetry]: exported logs, correlated to traces by trace id).
// - Trace correlation: a record carrying `trace_id` and `span_id` (hex, as SpanRef from
//   spans.ts) is tied to that span; otherwise to the span of the active context, if any.
// - Records of component `telemetry` stay local: they report export trouble, and exporting
//   them through the failing exporter would feed the trouble.
// - write() never throws: bunyan calls it inside the caller's log statement.
import { context as otelContext, isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { SeverityNumber, type AnyValue, type LogAttributes, type Logger as OtelLogger } from '@opentelemetry/api-logs';

/** bunyan's numeric levels. */
const WARN = 40;
const ERROR = 50;
const FATAL = 60;

/** Fields every bunyan record has, or that this bridge maps to something else. */
const RESERVED = new Set(['v', 'level', 'name', 'hostname', 'pid', 'time', 'msg', 'src', 'err', 'trace_id', 'span_id', 'trace_flags']);

/** Longest text attribute a log record carries; the LoggerProvider (otel.ts) is given the same limit. */
export const MAX_ATTRIBUTE_TEXT = 4096;

export interface BunyanRawStream {
  write(record: object): void;
}

export function createLogBridge(logger: OtelLogger): BunyanRawStream {
  return {
    write(record: object): void {
      try {
        forward(logger, record as Record<string, unknown>);
      } catch {
        // A log statement must not fail because telemetry could not take the record.
      }
    },
  };
}

function forward(logger: OtelLogger, rec: Record<string, unknown>): void {
  const level = typeof rec['level'] === 'number' ? rec['level'] : 0;
  if (level < WARN || rec['component'] === 'telemetry') return;
  const [severityNumber, severityText] = severity(level);
  logger.emit({
    severityNumber,
    severityText,
    body: typeof rec['msg'] === 'string' ? rec['msg'] : '',
    timestamp: rec['time'] instanceof Date ? rec['time'] : undefined,
    attributes: attributesOf(rec),
    exception: rec['err'] ?? undefined,
    context: contextOf(rec),
  });
}

function severity(level: number): [SeverityNumber, string] {
  if (level >= FATAL) return [SeverityNumber.FATAL, 'FATAL'];
  if (level >= ERROR) return [SeverityNumber.ERROR, 'ERROR'];
  return [SeverityNumber.WARN, 'WARN'];
}

function contextOf(rec: Record<string, unknown>): Context {
  const traceId = rec['trace_id'];
  const spanId = rec['span_id'];
  if (typeof traceId === 'string' && typeof spanId === 'string') {
    const flags = rec['trace_flags'];
    const spanContext = {
      traceId,
      spanId,
      traceFlags: typeof flags === 'number' ? flags & 0xff : TraceFlags.SAMPLED,
      isRemote: false,
    };
    if (isSpanContextValid(spanContext)) return trace.setSpanContext(ROOT_CONTEXT, spanContext);
  }
  return otelContext.active();
}

function attributesOf(rec: Record<string, unknown>): LogAttributes {
  const out: LogAttributes = {};
  for (const [key, value] of Object.entries(rec)) {
    if (RESERVED.has(key) || value === undefined) continue;
    out[key] = attributeValue(value);
  }
  return out;
}

function attributeValue(value: unknown): AnyValue {
  switch (typeof value) {
    case 'string': return clip(value);
    case 'number':
    case 'boolean': return value;
    case 'bigint': return value.toString();
    default:
      if (value === null) return null;
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Error) return clip(`${value.name}: ${value.message}`);
      return clip(toJson(value));
  }
}

function toJson(value: unknown): string {
  try {
    const seen = new WeakSet<object>();
    return JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return '[circular]';
        seen.add(v);
      }
      return v;
    }) ?? String(value);
  } catch {
    return String(value);
  }
}

function clip(text: string): string {
  return text.length <= MAX_ATTRIBUTE_TEXT ? text : text.slice(0, MAX_ATTRIBUTE_TEXT) + '…';
}
