// The token file (`controller.auth_file`): TOML with one `[token.<name>]` table per token,
// each with `secret` and `namespace` (`*` = every identifier, else an identifier prefix).
// Read once at startup; changes need a restart (tickd.toml(5) TOKEN FILE).
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { StartupError } from '../errors.ts';
import { isTable } from './load.ts';

export interface TokenEntry {
  readonly name: string;
  readonly secret: string;
  readonly namespace: string;
}

const err = (name: ConstructorParameters<typeof StartupError>[1], message: string) =>
  new StartupError('auth_file', name, message);

export function loadTokenFile(path: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw err('ReadError', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  return parseTokens(text, path);
}

export function parseTokens(text: string, path: string): TokenEntry[] {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    throw err('InvalidValue', `${path} is not valid TOML: ${String((e as Error).message).split('\n')[0]}`);
  }
  for (const key of Object.keys(doc)) {
    if (key !== 'token') throw err('UnknownSection', `${path}: [${key}] is not allowed (only [token.<name>] tables)`);
  }
  const tables = doc['token'] ?? {};
  if (!isTable(tables)) throw err('InvalidValue', `${path}: token must be a set of [token.<name>] tables`);
  const tokens: TokenEntry[] = [];
  const seen = new Map<string, string>();
  for (const [name, body] of Object.entries(tables)) {
    if (!isTable(body)) throw err('InvalidValue', `${path}: token.${name} must be a table`);
    for (const key of Object.keys(body)) {
      if (key !== 'secret' && key !== 'namespace') throw err('UnknownKey', `token.${name}.${key} is not a key (allowed: secret, namespace)`);
    }
    const { secret, namespace } = body;
    if (secret === undefined) throw err('MissingSecret', `token.${name} has no secret`);
    if (typeof secret !== 'string' || secret === '') throw err('MissingSecret', `token.${name}.secret must be a non-empty string`);
    if (namespace === undefined || namespace === '') throw err('EmptyNamespace', `token.${name}.namespace is missing or empty`);
    if (typeof namespace !== 'string') throw err('InvalidValue', `token.${name}.namespace must be a string`);
    const other = seen.get(secret);
    if (other !== undefined) throw err('DuplicateSecret', `token.${name} and token.${other} share a secret`);
    seen.set(secret, name);
    tokens.push({ name, secret, namespace });
  }
  return tokens;
}
