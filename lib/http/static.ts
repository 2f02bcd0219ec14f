// Static files beside the JSON API: the console at /ui/ (lib/http/ui/console) and the API
// reference at /docs/ (our shell in lib/http/ui/docs plus swagger-ui-dist's assets under
// /docs/vendor/<swagger-ui-dist version>/), all served by sirv. They carry no data, so they
// need no token; every data call the pages make goes to the JSON API with the user's token.
//
// Invariants:
// - Only GET and HEAD; anything else is 405 with `Allow`. A missing file is 404 {"error"}, like
//   the API. These handlers answer every request they get and never call polka's next (its
//   405 fallback would list the API's methods for a static path).
// - Caching: our own files are `no-cache` + ETag, so a browser revalidates on every load (304
//   when unchanged) and sees an upgrade at once. swagger-ui-dist's files are served under
//   their package version, so a URL's content never changes: `max-age` one year, immutable.
// - Files are listed once at startup, with their size and mtime (sirv's production mode): no
//   path from a request ever reaches the file system, so `..` and encoded tricks cannot escape
//   the directories. Replacing the files therefore needs a restart, like any code upgrade.
// - Range requests are ignored (sirv's range parsing trusts its input; these files are small).
// - A Content-Security-Policy forbids every origin but our own: nothing loads from the internet.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Polka, Request } from 'polka';
import sirv from 'sirv';
import type { Logger } from '../log.ts';
import { sendError } from './json.ts';

type Serve = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export const CONSOLE_DIR = fileURLToPath(new URL('./ui/console', import.meta.url));
export const DOCS_SHELL_DIR = fileURLToPath(new URL('./ui/docs', import.meta.url));

/** Our own files: revalidate every time (ETag makes that a 304). */
export const REVALIDATE = 'no-cache';
/** Versioned vendor files: a URL's content never changes. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

// form-action 'none': the forms are handled by script; if script failed, a native submit must
// not put the token into a URL.
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
  + "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";
// Swagger UI sets inline styles and shows data: images (icons, highlighted code).
export const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
  + "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

// The swagger-ui-dist files the docs page uses; its index.html, petstore initializer,
// oauth2 redirect, README and package.json are not served.
const VENDOR_FILE = /^\/(?:swagger-ui(?:-bundle)?\.(?:js|css)(?:\.map)?|favicon-(?:16x16|32x32)\.png)$/;

export interface SwaggerUiDist {
  readonly dir: string;
  readonly version: string;
}

/** Where swagger-ui-dist is installed and its version, or a reason why it cannot be used. */
export function findSwaggerUiDist(): SwaggerUiDist | string {
  try {
    const pkgPath = createRequire(import.meta.url).resolve('swagger-ui-dist/package.json');
    const version: unknown = (JSON.parse(readFileSync(pkgPath, 'utf8')) as { version?: unknown }).version;
    if (typeof version !== 'string' || !/^[0-9A-Za-z.+-]+$/.test(version)) return 'swagger-ui-dist has no usable version';
    return { dir: dirname(pkgPath), version };
  } catch (err) {
    return `swagger-ui-dist is not installed (${(err as Error).message})`;
  }
}

function withHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

function notFound(res: ServerResponse): void {
  // Headers meant for a file must not describe the error.
  for (const name of ['Cache-Control', 'Content-Security-Policy']) res.removeHeader(name);
  sendError(res, 404, 'not found');
}

function sirvLayer(dir: string, cacheControl: string, csp: string): Serve {
  const serve = sirv(dir, { etag: true, dev: false, dotfiles: false, extensions: ['html'] });
  // Set before sirv runs so a 304 carries them too; sirv keeps headers already set.
  return (req, res, next) => {
    withHeaders(res, { ...COMMON_HEADERS, 'Cache-Control': cacheControl, 'Content-Security-Policy': csp });
    // sirv pipes a file stream into res without an error listener: a file removed after
    // startup must end this response, not the worker.
    res.once('pipe', (src: NodeJS.ReadableStream) => src.once('error', () => res.destroy()));
    serve(req, res, next);
  };
}

/**
 * A polka middleware for the mount `base` ('/ui'): `base` alone redirects to `base/`,
 * `layers` are tried in order, and nothing found is 404.
 */
function mount(base: string, layers: readonly Serve[]): (req: Request, res: ServerResponse) => void {
  const name = base.slice(base.lastIndexOf('/') + 1);
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 405, `method ${req.method ?? ''} not allowed; allowed: GET, HEAD`, { Allow: 'GET, HEAD' });
    }
    const original = req.originalUrl ?? req.url;
    const query = original.indexOf('?');
    const path = query < 0 ? original : original.slice(0, query);
    if (path.length === base.length) {
      // Relative, so a reverse proxy's path prefix is kept.
      res.writeHead(301, { Location: `${name}/${query < 0 ? '' : original.slice(query)}`, 'Content-Length': 0 });
      return res.end();
    }
    delete req.headers.range;
    let i = 0;
    const next = (): void => {
      const layer = layers[i++];
      if (layer === undefined) notFound(res);
      else layer(req, res, next);
    };
    next();
  };
}

/** The vendor layer: only /vendor/<version>/<allowed file>, served from swagger-ui-dist. */
function vendorLayer(dist: SwaggerUiDist): Serve {
  const prefix = `/vendor/${dist.version}`;
  const serve = sirvLayer(dist.dir, IMMUTABLE, DOCS_CSP);
  return (req, res, next) => {
    const url = req.url ?? '';
    const path = url.split('?')[0]!;
    if (!path.startsWith(`${prefix}/`) || !VENDOR_FILE.test(path.slice(prefix.length))) return next();
    req.url = path.slice(prefix.length);
    serve(req, res, next);
  };
}

/** Where the files come from; the defaults are the installed ones (tests may override). */
export interface StaticSources {
  readonly consoleDir?: string;
  readonly dist?: SwaggerUiDist | string;
}

/** Mounts /ui and /docs on `app`. Without swagger-ui-dist, /docs answers 503 (logged once). */
export function mountStatic(app: Polka, log: Logger, sources: StaticSources = {}): void {
  app.use('/ui', mount('/ui', [sirvLayer(sources.consoleDir ?? CONSOLE_DIR, REVALIDATE, CONSOLE_CSP)]));
  const dist = sources.dist ?? findSwaggerUiDist();
  if (typeof dist === 'string') {
    log.warn({ reason: dist }, 'API reference at /docs/ unavailable');
    app.use('/docs', (_req: Request, res: ServerResponse) => sendError(res, 503, `API reference unavailable: ${dist}`));
    return;
  }
  app.use('/docs', mount('/docs', [sirvLayer(DOCS_SHELL_DIR, REVALIDATE, DOCS_CSP), vendorLayer(dist)]));
}
