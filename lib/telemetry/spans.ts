// One SERVER span `tickd.request` per answered TCP request (tickd.toml(5) [telemetry]). The
// session reports a request once it is answered, so the span is recorded after the fact:
// it starts at the hrtime the line was received and ends now. Spans are roots (the line
// protocol carries no trace context). Attribute values are bounded by the provider's span
// limits (an unknown instruction is client text).
import { ROOT_CONTEXT, SpanKind, type Tracer } from '@opentelemetry/api';
import { EpochClock } from '../clock.ts';
import { toHrTime } from './clock.ts';

export const SPAN_NAME = 'tickd.request';
export const ATTR_COMMAND = 'tickd.command';
export const ATTR_REQUEST_ID = 'tickd.request.id';
export const ATTR_SUCCESS = 'tickd.success';

/** Mirrors lib/protocol/session.ts RequestInfo (telemetry does not import the worker side). */
export interface RequestSpanInfo {
  readonly rid: string;
  readonly instruction: string;
  /** process.hrtime.bigint() when the line was received. */
  readonly startedNs: bigint;
  readonly success: boolean;
}

/** Identifies a recorded span, in the field names the log bridge reads from log records. */
export interface SpanRef {
  readonly trace_id: string;
  readonly span_id: string;
  readonly trace_flags: number;
}

export type RequestSpans = (info: RequestSpanInfo) => SpanRef;

export function createRequestSpans(tracer: Tracer, clock: EpochClock = new EpochClock()): RequestSpans {
  return (info) => {
    const endHr = clock.nowHr();
    const start = info.startedNs <= endHr ? info.startedNs : endHr;
    const span = tracer.startSpan(SPAN_NAME, {
      kind: SpanKind.SERVER,
      startTime: toHrTime(clock.toEpochNs(start)),
      attributes: {
        [ATTR_COMMAND]: info.instruction,
        [ATTR_REQUEST_ID]: info.rid,
        [ATTR_SUCCESS]: info.success,
      },
    }, ROOT_CONTEXT);
    span.end(toHrTime(clock.toEpochNs(endHr)));
    const ctx = span.spanContext();
    return { trace_id: ctx.traceId, span_id: ctx.spanId, trace_flags: ctx.traceFlags };
  };
}
