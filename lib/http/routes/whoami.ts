// GET /whoami (tickd-protocol(7) HTTP INTERFACE): the token behind the request, as its name and
// namespace from the token file, so that a client (the console's "signed in as" line) can tell
// which token a secret is without the secret ever being shown back. Authenticated like the data
// routes: a wrong secret is 401 here too, which makes it the check a client runs before keeping
// a secret. Answered by the worker itself: the principal is already known, nothing crosses IPC.
// Without an auth_file every caller has full access and no token: name null, namespace "*",
// auth_enabled false.
import type { Principal } from '../../auth/verify.ts';
import { sendJson, type JsonValue } from '../json.ts';
import type { HttpContext, Route } from '../route.ts';

export function whoamiToJson(principal: Principal, authEnabled: boolean): JsonValue {
  return authEnabled
    ? { name: principal.name, namespace: principal.namespace, auth_enabled: true }
    : { name: null, namespace: '*', auth_enabled: false };
}

export function whoamiRoutes(ctx: HttpContext): Route[] {
  return [{
    method: 'GET', path: '/whoami', auth: true,
    handle: ({ res, principal }) => sendJson(res, 200, whoamiToJson(principal, ctx.tokens !== null)),
  }];
}
