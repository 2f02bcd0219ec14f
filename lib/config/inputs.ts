// Everything the daemon reads before it starts (configuration, token file, TLS material), and
// all that `tickd --check` validates: without side effects beyond reading the files.
import { loadConfigFile, parseConfig } from './load.ts';
import type { Config } from './schema.ts';
import { loadTls, type TlsMaterial } from './tls.ts';
import { loadTokenFile, type TokenEntry } from './tokens.ts';

export interface StartupInputs {
  readonly config: Config;
  /** null when no auth_file is configured. */
  readonly tokens: TokenEntry[] | null;
  readonly tls: TlsMaterial | null;
}

/** configPath null: every default. Throws StartupError naming what is wrong. */
export function loadStartupInputs(configPath: string | null): StartupInputs {
  const config = configPath === null ? parseConfig('', null) : loadConfigFile(configPath);
  const tokens = config.controller.auth_file === null ? null : loadTokenFile(config.controller.auth_file);
  return { config, tokens, tls: loadTls(config) };
}
