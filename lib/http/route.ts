// The shape every HTTP route has, and the one path from a route to the primary: namespace
// scoping (lib/auth/scope.ts), dispatch, and turning an error Reply into its HTTP status and
// {"error": message} body (statuses from the lib/errors.ts registry).
import type { ServerResponse } from 'node:http';
import type { Request } from 'polka';
import type { Command, Reply } from '../domain/command.ts';
import type { Principal, TokenTable } from '../auth/verify.ts';
import { scopeCommand } from '../auth/scope.ts';
import { httpStatus } from '../errors.ts';
import { sendError } from './json.ts';

/**
 * The daemon's phase as GET /ready reports it: `starting` until the daemon is ready (commands
 * may be answered already), `ready`, then `stopping` from the start of a graceful stop on.
 */
export type Readiness = 'starting' | 'ready' | 'stopping';

export interface HttpContext {
  readonly dispatch: (cmd: Command) => Promise<Reply>;
  /** Read at every GET /ready. */
  readonly readiness: () => Readiness;
  readonly tokens: TokenTable | null;
  readonly version: string;
  /** Started with --cluster. A node running alone neither serves nor documents GET /cluster. */
  readonly cluster: boolean;
}

export interface Call {
  readonly req: Request;
  readonly res: ServerResponse;
  readonly principal: Principal;
}

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

export interface Route {
  readonly method: Method;
  /** A polka pattern: `/jobs/:id`. */
  readonly path: string;
  /** false only for /health, /ready and /openapi.json. */
  readonly auth: boolean;
  readonly handle: (call: Call) => Promise<void> | void;
}

export type Success = Extract<Reply, { ok: true }>;
export type SuccessOf<K extends Success['kind']> = Extract<Success, { kind: K }>;

/** The message of an error reply as the HTTP body shows it: `internal` never carries details. */
function errorMessage(reply: Extract<Reply, { ok: false }>): string {
  if (reply.code === 'internal') return 'internal';
  return reply.message === '' ? reply.code : reply.message;
}

/**
 * Scopes `cmd` to the caller's namespace and sends it to the primary. Returns the success
 * reply of the expected kind, or null after the error response has been sent.
 */
export async function perform<K extends Success['kind']>(ctx: HttpContext, call: Call, cmd: Command, kind: K): Promise<SuccessOf<K> | null> {
  const scoped = scopeCommand(cmd, call.principal.namespace);
  if ('ok' in scoped) {
    sendError(call.res, httpStatus(scoped.code), errorMessage(scoped));
    return null;
  }
  const reply = await ctx.dispatch(scoped);
  if (!reply.ok) {
    sendError(call.res, httpStatus(reply.code), errorMessage(reply));
    return null;
  }
  // A reply of another kind is a broken invariant between worker and primary: onError -> 500.
  if (reply.kind !== kind) throw new Error(`${cmd.op}: expected a ${kind} reply, got ${reply.kind}`);
  return reply as SuccessOf<K>;
}
