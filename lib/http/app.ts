// The polka application: the route table, bearer authentication in front of every route that
// needs it, and the fallbacks. polka's own defaults are not used: its error handler takes
// err.code/err.status as the HTTP status and writes err.message as text. Here every failure,
// including a rejected async handler (polka routes it to onError via loop().catch(next)),
// becomes 500 {"error":"internal"}; an unknown path is 404, a known path with another method
// 405 with `Allow`. Nothing a client sends may throw out of this module.
import type { ServerResponse } from 'node:http';
import polka, { type Polka, type Request } from 'polka';
import type { Logger } from '../log.ts';
import type { Principal } from '../auth/verify.ts';
import { principalOf } from './auth.ts';
import { sendError } from './json.ts';
import type { HttpContext, Method, Route } from './route.ts';
import { jobRoutes } from './routes/jobs.ts';
import { ruleRoutes } from './routes/rules.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { metaRoutes } from './routes/meta.ts';
import { observeRoutes } from './routes/observe.ts';
import { whoamiRoutes } from './routes/whoami.ts';
import { mountStatic } from './static.ts';

const METHODS: readonly Method[] = ['GET', 'PUT', 'POST', 'DELETE'];

// The caller of an open route (/health, /ready, /openapi.json). Its namespace holds a character no
// identifier can, so it would be denied everything if such a route ever dispatched a command.
const ANONYMOUS: Principal = { name: 'anonymous', namespace: '\u0000' };

export interface App {
  /** Handles one request; never throws and never rejects. */
  handle(req: Request, res: ServerResponse): void;
}

export function routes(ctx: HttpContext): Route[] {
  return [...jobRoutes(ctx), ...ruleRoutes(ctx), ...scheduleRoutes(ctx), ...metaRoutes(ctx), ...observeRoutes(ctx), ...whoamiRoutes(ctx)];
}

/** Ends a response after a failure: a 500 body if nothing was sent yet, else cut the connection. */
function fail(res: ServerResponse): void {
  try {
    if (!res.headersSent) sendError(res, 500, 'internal');
    else res.destroy();
  } catch {
    res.destroy();
  }
}

export function createApp(ctx: HttpContext, log: Logger): App {
  let app: Polka;
  const allowed = (path: string): string[] => {
    const methods = METHODS.filter((m) => app.find(m, path).handlers.length > 0);
    return methods.includes('GET') ? ['GET', 'HEAD', ...methods.filter((m) => m !== 'GET')] : methods;
  };
  app = polka({
    onError: (err, req, res) => {
      // Must not throw: polka calls it from a promise's catch, so a throw would go unhandled.
      try {
        log.error({ err, method: req.method, path: req.path }, 'HTTP handler failed');
      } catch { /* logging is best effort */ }
      fail(res);
    },
    onNoMatch: (req, res) => {
      const allow = allowed(req.path);
      if (allow.length === 0) return sendError(res, 404, 'not found');
      sendError(res, 405, `method ${req.method} not allowed; allowed: ${allow.join(', ')}`, { Allow: allow.join(', ') });
    },
  });
  for (const route of routes(ctx)) {
    app.add(route.method, route.path, async (req: Request, res: ServerResponse) => {
      const principal = route.auth ? principalOf(req, ctx.tokens) : ANONYMOUS;
      if (principal === null) return sendError(res, 401, 'unauthorized', { 'WWW-Authenticate': 'Bearer' });
      await route.handle({ req, res, principal });
    });
  }
  // The console (/ui/) and the API reference (/docs/): static, no token (lib/http/static.ts).
  mountStatic(app, log);
  return {
    handle(req, res) {
      try {
        // Returns before async handlers settle; their rejections reach onError through polka.
        (app.handler as (req: Request, res: ServerResponse) => void)(req, res);
      } catch (err) {
        log.error({ err }, 'HTTP request could not be routed');
        fail(res);
      }
    },
  };
}
