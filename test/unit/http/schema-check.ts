// Test support (not a test file): checks JSON values against the schemas of the served
// OpenAPI document with ajv's JSON Schema 2020-12 validator (the dialect OpenAPI 3.1 uses).
// ajv comes with @apidevtools/swagger-parser. Shared by the unit and integration tests.
// The named export: ajv is CommonJS, and its default export is typed differently from what
// Node's ESM loader gives.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Obj = Record<string, unknown>;

// Each component schema is registered under its own absolute id; `#/components/schemas/X`
// refs are rewritten to those ids.
const SCHEMA_BASE = 'https://tickd.invalid/components/schemas/';
const LOCAL = '#/components/schemas/';

// ajv's `discriminator` keyword refuses `mapping` (it reads each branch's `const` instead);
// the document's mappings are checked against those consts by openapi.test.ts.
function anchorRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(anchorRefs);
  if (typeof value !== 'object' || value === null) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value as Obj)) {
    if (k === 'discriminator' && typeof v === 'object' && v !== null) {
      out[k] = Object.fromEntries(Object.entries(v as Obj).filter(([key]) => key !== 'mapping'));
      continue;
    }
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith(LOCAL) ? SCHEMA_BASE + v.slice(LOCAL.length) : anchorRefs(v);
  }
  return out;
}

export class SchemaChecker {
  private readonly doc: Obj;
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(doc: unknown, strict = false) {
    this.doc = doc as Obj;
    // validateFormats off: no format plugin is installed, and int64/date-time are annotations here.
    this.ajv = new Ajv2020({ strict, allErrors: true, validateFormats: false, discriminator: true });
    const schemas = (this.doc['components'] as Obj)['schemas'] as Obj;
    for (const [name, schema] of Object.entries(schemas)) this.ajv.addSchema(anchorRefs(schema) as Obj, SCHEMA_BASE + name);
  }

  /** Compiles every component schema (strict mode catches unknown or misspelled keywords). */
  compileAll(): string[] {
    const names = Object.keys((this.doc['components'] as Obj)['schemas'] as Obj);
    for (const name of names) this.ajv.compile({ $ref: SCHEMA_BASE + name });
    return names;
  }

  /** The operation object for `method path` (path as in the document: `/jobs/{id}`). */
  operation(method: string, path: string): Obj {
    const item = (this.doc['paths'] as Obj)[path] as Obj | undefined;
    const op = item?.[method.toLowerCase()] as Obj | undefined;
    if (op === undefined) throw new Error(`the document has no ${method} ${path}`);
    return op;
  }

  /** The response object documented for a status, following a shared-response $ref. */
  response(method: string, path: string, status: number): Obj {
    const responses = this.operation(method, path)['responses'] as Obj;
    let r = responses[String(status)] as Obj | undefined;
    if (r === undefined) throw new Error(`${method} ${path} does not document status ${status}`);
    const shared = r['$ref'];
    if (typeof shared === 'string') r = ((this.doc['components'] as Obj)['responses'] as Obj)[shared.slice(shared.lastIndexOf('/') + 1)] as Obj;
    return r;
  }

  /** Problems of a request body against the operation's requestBody schema (empty: conforms). */
  checkRequest(method: string, path: string, body: string): string[] {
    const requestBody = this.operation(method, path)['requestBody'] as Obj | undefined;
    if (requestBody === undefined) return [`${method} ${path} documents no request body`];
    const schema = ((requestBody['content'] as Obj)['application/json'] as Obj)['schema'];
    const key = `${method} ${path} request`;
    const validate = this.cache.get(key) ?? this.ajv.compile(anchorRefs(schema) as Obj);
    this.cache.set(key, validate);
    if (validate(JSON.parse(body))) return [];
    return (validate.errors ?? []).map((e) => `${key}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }

  /**
   * Checks a real response against the document: its status is documented for the operation
   * and its body matches that status' schema (or it has no body when none is documented).
   * Returns the list of problems (empty: conforms).
   */
  check(method: string, path: string, status: number, body: string): string[] {
    let r: Obj;
    try {
      r = this.response(method, path, status);
    } catch (err) {
      return [(err as Error).message];
    }
    const content = r['content'] as Obj | undefined;
    if (content === undefined) return body === '' ? [] : [`${method} ${path} ${status}: body not documented: ${body.slice(0, 200)}`];
    // A text body (GET /metrics, Prometheus text) is any non-empty text.
    if (content['application/json'] === undefined && content['text/plain'] !== undefined) return body !== '' ? [] : [`${method} ${path} ${status}: empty text body`];
    const schema = (content['application/json'] as Obj)['schema'];
    const key = `${method} ${path} ${status}`;
    const validate = this.cache.get(key) ?? this.ajv.compile(anchorRefs(schema) as Obj);
    this.cache.set(key, validate);
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${key}: body is not JSON: ${body.slice(0, 200)}`];
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${key}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }
}
