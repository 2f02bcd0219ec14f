// The worker's seam to the HTTP interface (lib/http): the worker calls startHttp when
// `[http] listen` is configured; everything HTTP-specific lives in lib/http/server.ts.
import type { Command, Reply } from '../lib/domain/command.ts';
import type { TokenTable } from '../lib/auth/verify.ts';
import type { Logger } from '../lib/log.ts';
import type { Readiness } from '../lib/http/route.ts';
import { startServer } from '../lib/http/server.ts';

export type { Readiness };

export interface HttpHandle {
  readonly host: string;
  readonly port: number;
  close(graceMs: number): Promise<void>;
}

export interface HttpStartOptions {
  readonly host: string;
  readonly port: number;
  readonly tokens: TokenTable | null;
  readonly dispatch: (cmd: Command) => Promise<Reply>;
  /** What GET /ready answers: the daemon's phase as the primary last told this worker. */
  readonly readiness: () => Readiness;
  readonly log: Logger;
  readonly version: string;
  readonly cluster: boolean;
}

export function startHttp(opts: HttpStartOptions): Promise<HttpHandle> {
  const log = opts.log.child({ component: 'http' });
  return startServer({ dispatch: opts.dispatch, readiness: opts.readiness, tokens: opts.tokens, version: opts.version, cluster: opts.cluster }, log, opts.host, opts.port);
}
