// GET /metrics and GET /activity (tickd-protocol(7) HTTP INTERFACE), both authenticated like
// /stats and allowed for any token whatever its namespace (they name no job).
// - /metrics: this node's metrics in the Prometheus text exposition format (version 0.0.4),
//   as the primary's OpenTelemetry Prometheus serializer wrote them (lib/telemetry/metrics.ts);
//   the primary answers it itself, never the leader.
// - /activity: per-second counts of the last minutes and the lateness of each second's runner
//   starts (lib/engine/activity.ts), as JSON; the engine's, so the leader's in cluster mode.
import type { ActivityView } from '../../domain/activity.ts';
import { sendJson, type JsonValue } from '../json.ts';
import { perform, type HttpContext, type Route } from '../route.ts';

/** The Prometheus text format's media type. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function activityToJson(view: ActivityView): JsonValue {
  return {
    interval_ms: view.intervalMs,
    buckets: view.buckets.map((b) => ({
      at_ms: b.atMs,
      fired: b.fired,
      executed: b.executed,
      failed: b.failed,
      lateness_p50_ms: b.latenessP50Ms,
      lateness_max_ms: b.latenessMaxMs,
    })),
  };
}

export function observeRoutes(ctx: HttpContext): Route[] {
  return [
    {
      method: 'GET', path: '/metrics', auth: true,
      handle: async (call) => {
        const reply = await perform(ctx, call, { op: 'metrics' }, 'metrics');
        if (reply === null) return;
        call.res.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(reply.text) });
        call.res.end(reply.text);
      },
    },
    {
      method: 'GET', path: '/activity', auth: true,
      handle: async (call) => {
        const reply = await perform(ctx, call, { op: 'activity' }, 'activity');
        if (reply !== null) sendJson(call.res, 200, activityToJson(reply.activity));
      },
    },
  ];
}
