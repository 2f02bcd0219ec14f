// Reads and validates the configuration file. Every failure is a StartupError whose name is
// one of the spec's (InvalidLogLevel, FramerateOutOfRange, UnknownSection, UnknownKey,
// InvalidValue) and whose message names the key, so `tickd --check` and startup print one
// precise line. Nothing here has side effects beyond reading files.
import { readTags } from '../domain/node-tags.ts';
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { httpUrlError } from '../domain/runner-validate.ts';
import { StartupError } from '../errors.ts';
import { parseListen } from './listen.ts';
import { SCHEMA, type Config, type KeyDef, type SectionName } from './schema.ts';

type Raw = Record<string, unknown>;

const bad = (key: string, message: string) => new StartupError('config', 'InvalidValue', `${key} ${message}`);

export function loadConfigFile(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new StartupError('config', 'ReadError', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseConfig(text, path);
}

export function parseConfig(text: string, source: string | null): Config {
  let doc: Raw;
  try {
    doc = parseToml(text) as Raw;
  } catch (err) {
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : '';
    throw new StartupError('config', 'InvalidValue', `not valid TOML${where}: ${firstLine(err)}`);
  }
  const values: Record<string, Record<string, unknown>> = {};
  for (const [section, body] of Object.entries(doc)) {
    if (!Object.hasOwn(SCHEMA, section)) {
      throw new StartupError('config', 'UnknownSection', `[${section}] is not a section (allowed: ${Object.keys(SCHEMA).join(', ')})`);
    }
    if (!isTable(body)) throw bad(section, 'must be a table ([section])');
    const defs = SCHEMA[section as SectionName] as Record<string, KeyDef>;
    values[section] = {};
    for (const [key, value] of Object.entries(body)) {
      if (!Object.hasOwn(defs, key)) {
        throw new StartupError('config', 'UnknownKey', `${section}.${key} is not a key of [${section}] (allowed: ${Object.keys(defs).join(', ')})`);
      }
      values[section][key] = checkValue(`${section}.${key}`, defs[key]!, value);
    }
  }
  const sections: Record<string, Record<string, unknown>> = {};
  for (const [section, defs] of Object.entries(SCHEMA)) {
    const out: Record<string, unknown> = {};
    for (const [key, def] of Object.entries(defs as Record<string, KeyDef>)) {
      const given = values[section]?.[key];
      out[key] = given !== undefined ? given : defaultValue(def);
    }
    sections[section] = out;
  }
  // Every key was checked against its KeyDef (or is its default), which is what Config says.
  const config = { source, ...sections } as unknown as Config;
  checkCrossFields(config);
  return config;
}

/** A key's default as the loaded value would be: a listen address parsed, else as written. */
function defaultValue(def: KeyDef): unknown {
  return def.type === 'listen' && typeof def.default === 'string' ? parseListen(def.default) : def.default;
}

function checkValue(key: string, def: KeyDef, value: unknown): unknown {
  // A value of the right kind outside the key's range or set: the key's own error name if any.
  const outside = (message: string) => new StartupError('config', def.error ?? 'InvalidValue', `${key} ${message}`);
  switch (def.type) {
    case 'bool':
      if (typeof value !== 'boolean') throw bad(key, 'must be true or false');
      return value;
    case 'int': {
      const n = typeof value === 'bigint' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n)) throw bad(key, 'must be an integer');
      if (n < (def.min ?? -Infinity) || n > (def.max ?? Infinity)) {
        throw outside(`must be between ${def.min} and ${def.max}, got ${n}`);
      }
      return n;
    }
    case 'enum':
      // Not a string cannot be in the set either: one check, one message.
      if (typeof value !== 'string' || !def.values!.includes(value)) {
        throw outside(`must be ${choices(def.values!)}, got ${show(value)}`);
      }
      return value;
    case 'string[]':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw bad(key, 'must be an array of quoted strings');
      return value;
    case 'listen': {
      if (typeof value !== 'string') throw bad(key, 'must be a "host:port" string');
      const addr = parseListen(value);
      if (typeof addr === 'string') throw bad(key, addr);
      return addr;
    }
    case 'url':
      if (typeof value !== 'string' || httpUrlError(value) !== null) throw bad(key, `must be an http:// or https:// URL, got ${show(value)}`);
      return value;
    case 'path':
    case 'string':
      if (typeof value !== 'string' || value === '') throw bad(key, 'must be a non-empty string');
      if (value.includes('\0')) throw bad(key, 'must not contain NUL');
      return value;
  }
}

function checkCrossFields(config: Config): void {
  const { tls_cert, tls_key } = config.controller;
  if ((tls_cert === null) !== (tls_key === null)) {
    throw bad(tls_cert === null ? 'controller.tls_cert' : 'controller.tls_key', 'must be set together with ' + (tls_cert === null ? 'controller.tls_key' : 'controller.tls_cert'));
  }
  const tags = readTags(config.cluster.node_tags);
  if ('error' in tags) throw bad('cluster.node_tags', tags.error);
  if (config.telemetry.enabled && config.telemetry.endpoint === null) {
    throw bad('telemetry.endpoint', 'is required when telemetry.enabled is true');
  }
  const shell = config.shell.path;
  if (!isAbsolute(shell)) throw bad('shell.path', `must be an absolute path, got "${shell}"`);
  let isFile = false;
  try { isFile = statSync(shell).isFile(); } catch { /* reported below */ }
  if (!isFile) throw bad('shell.path', `"${shell}" does not exist or is not a file`);
}

export function isTable(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Two choices read as `"a" or "b"`; a longer list as `one of a, b, c`. */
function choices(values: readonly string[]): string {
  return values.length === 2 ? values.map((v) => `"${v}"`).join(' or ') : `one of ${values.join(', ')}`;
}

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function firstLine(err: unknown): string {
  return String(err instanceof Error ? err.message : err).split('\n')[0] ?? '';
}
