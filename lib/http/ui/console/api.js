// The console's only way to the JSON API. Invariants: every data call carries the bearer
// token the user typed (kept in sessionStorage: gone when the tab closes, never in a URL or
// a cookie), so namespaces apply exactly as for any API client; API paths are resolved
// against the page (/ui/ -> /jobs), which keeps a reverse proxy's prefix; bodies are read as
// text and parsed with parseExact so integers keep every digit; an error carries the API's
// {"error"} message unchanged.
import { parseExact } from './format.js';

const TOKEN_KEY = 'tickd.token';

/** A failed call: `message` is the API's error text exactly as it was sent. */
export class ApiError extends Error {
  constructor(method, path, status, message) {
    super(message);
    this.name = 'ApiError';
    this.method = method;
    this.path = path;
    this.status = status;
  }

  /** What the user is shown: the call, the status, and the API's message verbatim. */
  describe() {
    return `${this.method} ${this.path} failed (${this.status === 0 ? 'no response' : `HTTP ${this.status}`}): ${this.message}`;
  }
}

export function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return ''; // storage disabled: the token lives only as long as the page
  }
}

export function storeToken(token) {
  try {
    if (token === '') sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch { /* storage disabled */ }
}

function apiUrl(path) {
  return new URL(`..${path}`, window.location.href);
}

/** The message of an error response: its {"error"} string, else the raw body, else the status text. */
function errorText(response, text) {
  try {
    const body = JSON.parse(text);
    if (body !== null && typeof body === 'object' && typeof body.error === 'string') return body.error;
  } catch { /* not JSON: show what came */ }
  return text !== '' ? text : response.statusText || 'request failed';
}

/**
 * Calls the API. `body` (an object) is sent as JSON. Resolves with the parsed body (null for
 * 204); rejects with an ApiError otherwise.
 */
export async function call(method, path, options = {}) {
  return (await exchange(method, path, options)).body;
}

const NEXT_LINK = /<([^>]*)>\s*;\s*rel="?next"?/;

/**
 * Every entry of a paged listing: follows the `Link: <…>; rel="next"` headers to the end.
 * (The console still shows whole lists; paging through them on screen is for a later change.)
 */
async function listAll(path) {
  const out = [];
  for (let next = path; next !== null;) {
    const { body, response } = await exchange('GET', next, {});
    out.push(...body);
    const link = NEXT_LINK.exec(response.headers.get('Link') ?? '');
    next = link === null ? null : link[1];
  }
  return out;
}

async function exchange(method, path, { token = storedToken(), body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token !== '') headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(apiUrl(path), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (err) {
    throw new ApiError(method, path, 0, err instanceof Error ? err.message : String(err));
  }
  const text = await response.text();
  if (!response.ok) throw new ApiError(method, path, response.status, errorText(response, text));
  return { body: text === '' ? null : parseExact(text), response };
}

/**
 * What the server offers, from the open /openapi.json: `needsToken` when it declares bearer
 * security, `cluster` when it has GET /cluster (cluster mode only: a node running alone has no
 * such route, and asking anyway would only log a 404 on every refresh).
 */
export async function serverFeatures() {
  const doc = await call('GET', '/openapi.json', { token: '' });
  return {
    needsToken: Array.isArray(doc?.security) && doc.security.length > 0,
    cluster: typeof doc?.paths === 'object' && doc.paths !== null && Object.hasOwn(doc.paths, '/cluster'),
  };
}

export const api = {
  stats: () => call('GET', '/stats'),
  cluster: () => call('GET', '/cluster'),
  jobs: (prefix) => listAll(prefix === '' ? '/jobs?limit=10000' : `/jobs?limit=10000&prefix=${encodeURIComponent(prefix)}`),
  putJob: (id, execution) => call('PUT', `/jobs/${encodeURIComponent(id)}`, { body: { execution } }),
  deleteJob: (id) => call('DELETE', `/jobs/${encodeURIComponent(id)}`),
  rules: () => listAll('/rules?limit=10000'),
  putRule: (id, body) => call('PUT', `/rules/${encodeURIComponent(id)}`, { body }),
  deleteRule: (id) => call('DELETE', `/rules/${encodeURIComponent(id)}`),
};
