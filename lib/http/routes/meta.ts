// /health (liveness: 200 whenever a worker answers), /ready (readiness: 200 only while the
// daemon is ready, 503 {"error":"not ready: starting|stopping"} before and from the start of a
// stop; tickd(8) "Readiness and health"), /openapi.json (these three without authentication),
// /stats (the TCP STAT values as a JSON object, same key order; numbers exact,
// auth_enabled/tls_enabled as 0/1 like TCP) and, in cluster mode only, /cluster (this node's
// view of its cluster). A node running alone has no such route, so it is the plain 404 of an
// unknown path and the document omits it: clients (the console) learn from /openapi.json
// whether to ask at all.
import type { ClusterView } from '../../domain/cluster-view.ts';
import { STAT_KEYS, type StatValues } from '../../domain/stat.ts';
import { sendError, sendJson, toJson, type JsonValue } from '../json.ts';
import { buildOpenApi } from '../openapi.ts';
import { perform, type HttpContext, type Route } from '../route.ts';

const TEXT_STATS: ReadonlySet<string> = new Set(['persistence', 'compression']);
const INTEGER = /^-?[0-9]+$/;

export function statToJson(stat: StatValues): JsonValue {
  const out: Record<string, JsonValue> = {};
  for (const key of STAT_KEYS) {
    const value = stat[key];
    if (TEXT_STATS.has(key)) {
      out[key] = String(value);
    } else if (typeof value === 'bigint') {
      out[key] = value;
    } else if (INTEGER.test(value)) {
      out[key] = BigInt(value);
    } else {
      throw new Error(`STAT ${key} is not an integer: ${value}`);
    }
  }
  return out;
}

/** The view with the HTTP API's snake_case keys, in a fixed order. */
export function clusterToJson(view: ClusterView): JsonValue {
  return {
    cluster: view.cluster,
    node: view.node,
    role: view.role,
    leader: view.leader,
    last_seq: view.lastSeq,
    applied_seq: view.appliedSeq,
    nodes: view.nodes.map((n) => {
      const node = { name: n.name, role: n.role, applied_seq: n.appliedSeq, lag: n.lag, seen_ago_ms: n.seenAgoMs, format: n.format };
      return n.executor === undefined ? node : { ...node, executor: { tags: [...n.executor.tags], capacity: n.executor.capacity, running: n.executor.running } };
    }),
    format: view.format,
    active_format: view.activeFormat,
    upgrade_needed: view.upgradeNeeded === null ? null : { ...view.upgradeNeeded },
    ...(view.placement === undefined ? {} : { placement: { waiting: view.placement.waiting, placed: { ...view.placement.placed } } }),
  };
}

export function metaRoutes(ctx: HttpContext): Route[] {
  // The document only depends on the configuration: serialize it once.
  const openapi = toJson(buildOpenApi({ version: ctx.version, auth: ctx.tokens !== null, cluster: ctx.cluster }));
  const routes: Route[] = [
    { method: 'GET', path: '/health', auth: false, handle: ({ res }) => sendJson(res, 200, { status: 'ok' }) },
    {
      method: 'GET', path: '/ready', auth: false,
      handle: ({ res }) => {
        const now = ctx.readiness();
        if (now === 'ready') sendJson(res, 200, { status: 'ready' });
        else sendError(res, 503, `not ready: ${now}`);
      },
    },
    {
      method: 'GET', path: '/openapi.json', auth: false,
      handle: ({ res }) => {
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(openapi) });
        res.end(openapi);
      },
    },
    {
      method: 'GET', path: '/stats', auth: true,
      handle: async (call) => {
        const reply = await perform(ctx, call, { op: 'stat' }, 'stat');
        if (reply !== null) sendJson(call.res, 200, statToJson(reply.stat));
      },
    },
  ];
  if (ctx.cluster) {
    routes.push({
      method: 'GET', path: '/cluster', auth: true,
      handle: async (call) => {
        const reply = await perform(ctx, call, { op: 'cluster' }, 'cluster');
        if (reply !== null) sendJson(call.res, 200, clusterToJson(reply.cluster));
      },
    });
  }
  return routes;
}
