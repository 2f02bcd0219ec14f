// Placeholder seam for the HTTP interface (lib/http): the worker calls startHttp when
// `[http] listen` is configured.
import type { Command, Reply } from '../lib/domain/command.ts';
import type { TokenTable } from '../lib/auth/verify.ts';
import type { Logger } from '../lib/log.ts';

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
  readonly log: Logger;
  readonly version: string;
}

export async function startHttp(_opts: HttpStartOptions): Promise<HttpHandle> {
  throw new Error('the HTTP interface is not available in this build');
}
