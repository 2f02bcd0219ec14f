// Test support for the HTTP integration tests (not a test file): a keep-alive client over
// node:http that returns the raw body text (so exact integers can be checked digit for digit)
// and, when given the served OpenAPI document, checks EVERY response against it: the status
// must be documented for the operation and the body must match its schema.
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { LineClient } from '../helpers/client.ts';
import { Daemon, type Address } from '../helpers/daemon.ts';
import { SchemaChecker } from '../unit/http/schema-check.ts';

export interface HttpResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

export interface RequestOptions {
  /** An object is sent as JSON; a string or Buffer as is. */
  readonly body?: unknown;
  /** Default application/json when there is a body; null sends no Content-Type. */
  readonly contentType?: string | null;
  /** Overrides the client's token; null sends no Authorization header. */
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
}

/** The document's path template for a concrete path, or null for paths it does not describe. */
export function templateOf(path: string): string | null {
  const p = path.split('?')[0]!;
  if (p === '/jobs' || p === '/rules' || p === '/health' || p === '/ready' || p === '/stats' || p === '/cluster' || p === '/openapi.json') return p;
  if (p === '/activity' || p === '/metrics' || p === '/whoami' || p === '/schedules') return p;
  const m = /^\/(jobs|rules|schedules)\/[^/]+$/.exec(p);
  if (m !== null) return `/${m[1]}/{id}`;
  const sub = /^\/schedules\/[^/]+\/(next|occurrences|pause|resume|run)$/.exec(p);
  if (sub !== null) return `/schedules/{id}/${sub[1]}`;
  const job = /^\/jobs\/[^/]+\/(attempts|retry)$/.exec(p);
  return job === null ? null : `/jobs/{id}/${job[1]}`;
}

export class HttpApi {
  readonly addr: Address;
  readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private readonly token: string | null;
  private checker: SchemaChecker | null = null;
  private paths: ReadonlySet<string> = new Set();
  /** Responses checked against the document (tests assert it grew). */
  checked = 0;

  constructor(addr: Address, token: string | null = null) {
    this.addr = addr;
    this.token = token;
  }

  /** From now on, every response is checked against this document. */
  useDocument(doc: unknown): void {
    this.checker = new SchemaChecker(doc);
    this.paths = new Set(Object.keys((doc as { paths: object }).paths));
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
    let body: Buffer | undefined;
    if (opts.body !== undefined) body = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? this.token : opts.token;
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    if (body !== undefined && opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
    if (body !== undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = String(body.length);
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: this.addr.host, port: this.addr.port, method, path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const result = { status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
          try {
            this.conform(method, path, result, body);
            resolve(result);
          } catch (err) {
            reject(err as Error);
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** request(), then JSON.parse of the body (integers above 2^53 lose digits: check .text for those). */
  async json(method: string, path: string, opts: RequestOptions = {}): Promise<{ status: number; body: unknown; res: HttpResult }> {
    const res = await this.request(method, path, opts);
    return { status: res.status, body: res.text === '' ? undefined : JSON.parse(res.text), res };
  }

  private conform(method: string, path: string, res: HttpResult, body: Buffer | undefined): void {
    if (this.checker === null) return;
    const template = templateOf(path);
    // 404 for unknown paths and 405 for undocumented methods are outside any operation. A
    // template this configuration does not serve (/cluster on a node alone) is such a path;
    // any other status for it stays an error: the server would serve what it does not document.
    if (template === null || res.status === 405) return;
    if (res.status === 404 && !this.paths.has(template)) return;
    const problems = this.checker.check(method, template, res.status, res.text);
    // Whatever the server accepted, the document must accept too.
    if (method === 'PUT' && res.status === 200 && body !== undefined) problems.push(...this.checker.checkRequest(method, template, body.toString('utf8')));
    if (problems.length > 0) throw new Error(`response does not match the OpenAPI document:\n${problems.join('\n')}`);
    this.checked++;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A daemon with HTTP on (2 workers, no auth_file), an HttpApi on it and a TCP client. */
export interface HttpDaemon {
  readonly daemon: Daemon;
  readonly api: HttpApi;
  readonly tcp: LineClient;
}

export async function startHttpDaemon(): Promise<HttpDaemon> {
  const daemon = await Daemon.start({ workers: 2, config: { http: { listen: '127.0.0.1:0' } } });
  return { daemon, api: new HttpApi(daemon.http!), tcp: await LineClient.connect(daemon.tcp) };
}

export async function stopHttpDaemon(started: Partial<HttpDaemon>): Promise<void> {
  started.tcp?.close();
  started.api?.close();
  await started.daemon?.stop();
}
