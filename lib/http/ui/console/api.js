// The console's only way to the JSON API. Invariants: every data call carries the bearer
// token the user typed (kept in sessionStorage: gone when the tab closes, never in a URL or
// a cookie), so namespaces apply exactly as for any API client; API paths are resolved
// against the page (/ui/ -> /jobs), which keeps a reverse proxy's prefix; bodies are read as
// text and parsed with parseExact so integers keep every digit; an error carries the API's
// {"error"} message unchanged. Listings are read one page at a time (limit + cursor), never
// whole: the console shows a page, and the counts come from /stats.
import { nextCursor, pageQuery, parseExact } from './format.js';

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
 * One page of a listing: its entries and the cursor of the next page (null on the last). The
 * body is the array itself (/jobs, /rules) or holds it under the listing's name (/schedules).
 */
async function page(kind, { limit, cursor, prefix, status }) {
  const { body, response } = await exchange('GET', `/${kind}?${pageQuery({ limit, cursor, prefix, status })}`, {});
  const items = Array.isArray(body) ? body : Array.isArray(body?.[kind]) ? body[kind] : [];
  return { items, next: nextCursor(response.headers.get('Link')) };
}

/**
 * What the server offers, from the open /openapi.json: `needsToken` when it declares bearer
 * security, `cluster` when it has GET /cluster (cluster mode only: a node running alone has no
 * such route, and asking anyway would only log a 404 on every refresh), `activity` when it has
 * GET /activity (the chart's data), `schedules` when it has GET /schedules, `attempts` and
 * `retry` when it has a job's attempt history and its "run again" (retries, issue 38).
 */
export async function serverFeatures() {
  const doc = await call('GET', '/openapi.json', { token: '' });
  const paths = typeof doc?.paths === 'object' && doc.paths !== null ? doc.paths : {};
  return {
    needsToken: Array.isArray(doc?.security) && doc.security.length > 0,
    cluster: Object.hasOwn(paths, '/cluster'),
    activity: Object.hasOwn(paths, '/activity'),
    schedules: Object.hasOwn(paths, '/schedules'),
    attempts: Object.hasOwn(paths, '/jobs/{id}/attempts'),
    retry: Object.hasOwn(paths, '/jobs/{id}/retry'),
  };
}

const path = (kind, id) => `/${kind}/${encodeURIComponent(id)}`;

export const api = {
  /**
   * GET /whoami with a token not yet kept: how a typed token is checked before it is stored
   * (any valid token may call it); resolves with its name and namespace.
   */
  checkToken: (token) => call('GET', '/whoami', { token }),
  whoami: () => call('GET', '/whoami'),
  stats: () => call('GET', '/stats'),
  activity: () => call('GET', '/activity'),
  cluster: () => call('GET', '/cluster'),
  jobsPage: (query) => page('jobs', query),
  job: (id) => call('GET', path('jobs', id)),
  jobAttempts: (id) => call('GET', `${path('jobs', id)}/attempts`),
  retryJob: (id) => call('POST', `${path('jobs', id)}/retry`),
  putJob: (id, execution) => call('PUT', path('jobs', id), { body: { execution } }),
  deleteJob: (id) => call('DELETE', path('jobs', id)),
  rulesPage: (query) => page('rules', query),
  putRule: (id, body) => call('PUT', path('rules', id), { body }),
  deleteRule: (id) => call('DELETE', path('rules', id)),
  schedulesPage: (query) => page('schedules', query),
  schedule: (id) => call('GET', path('schedules', id)),
  scheduleNext: (id, n) => call('GET', `${path('schedules', id)}/next?n=${n}`),
  scheduleOccurrences: (id, limit) => call('GET', `${path('schedules', id)}/occurrences?limit=${limit}`),
  putSchedule: (id, body) => call('PUT', path('schedules', id), { body }),
  deleteSchedule: (id) => call('DELETE', path('schedules', id)),
  pauseSchedule: (id) => call('POST', `${path('schedules', id)}/pause`),
  resumeSchedule: (id) => call('POST', `${path('schedules', id)}/resume`),
  runSchedule: (id) => call('POST', `${path('schedules', id)}/run`),
};
