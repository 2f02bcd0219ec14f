// Pure helpers of the console (no DOM): exact JSON parsing, nanosecond timestamps and
// durations, relative times, the paged listing's next cursor, STAT counts, runner and attempt
// descriptions, the session line. Invariant: an integer from the API never passes through a JS number. The API
// writes execution and the STAT figures as exact integers, often above 2^53, so parseExact
// turns every integer literal into its decimal string before JSON.parse sees it.

// A JSON string literal, or a whole integer literal: not part of a fraction or an exponent
// (the lookarounds refuse a neighbouring digit, letter, '.', '+' or '-'). Strings come first
// in the alternation, so digits inside them are consumed whole and never quoted.
const TOKEN = /"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d+(?![\w.])/g;

/** JSON.parse, except that integer literals become strings holding their exact digits. */
export function parseExact(text) {
  return JSON.parse(text.replace(TOKEN, (token) => (token.startsWith('"') ? token : `"${token}"`)));
}

const NS_PER_SECOND = 1000000000n;

/** Whether `value` is a decimal integer string (the form parseExact gives integers). */
export function isIntegerText(value) {
  return typeof value === 'string' && /^-?\d+$/.test(value);
}

/**
 * ISO 8601 UTC with all nine fraction digits for integer nanoseconds since the epoch
 * ("1775822400123456789" -> "2026-04-10T12:00:00.123456789Z"); null for anything else.
 */
export function nsToIso(ns) {
  if (!isIntegerText(ns)) return null;
  const total = BigInt(ns);
  let seconds = total / NS_PER_SECOND;
  let fraction = total % NS_PER_SECOND;
  // BigInt division truncates toward zero; timestamps before 1970 need the floor.
  if (fraction < 0n) {
    seconds -= 1n;
    fraction += NS_PER_SECOND;
  }
  const date = new Date(Number(seconds) * 1000);
  if (Number.isNaN(date.getTime())) return null;
  return date.toISOString().replace(/\.\d{3}Z$/, `.${fraction.toString().padStart(9, '0')}Z`);
}

/** An ISO 8601 UTC string (seconds) `minutes` from now: the default of the job form. */
export function isoFromNow(minutes, now = Date.now()) {
  return new Date(now + minutes * 60000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** "3 d 4 h 5 min" for a nanosecond duration string; the raw text when it is not one. */
export function formatDuration(ns) {
  if (!isIntegerText(ns)) return String(ns);
  let seconds = BigInt(ns) / NS_PER_SECOND;
  const parts = [];
  for (const [unit, size] of [['d', 86400n], ['h', 3600n], ['min', 60n]]) {
    if (seconds >= size) {
      parts.push(`${seconds / size} ${unit}`);
      seconds %= size;
    }
  }
  if (parts.length === 0 || seconds > 0n) parts.push(`${seconds} s`);
  return parts.join(' ');
}

/** Quotes an argument that would otherwise be ambiguous in a one-line display. */
function showArg(arg) {
  return arg === '' || /[\s"'\\]/.test(arg) ? JSON.stringify(arg) : arg;
}

/** The runner's fields as [label, value] pairs, for every kind the API may return. */
export function runnerDetails(runner) {
  const r = runner ?? {};
  const list = (values) => (Array.isArray(values) ? values.map(showArg).join(' ') : '');
  switch (r.type) {
    case 'shell': return [['command', r.command]];
    case 'direct': return [['executable', r.executable], ['arguments', list(r.args)]];
    case 'http': return [['method', r.method], ['URL', r.url]];
    case 'awf': return [['workflow', r.workflow], ['inputs', list(r.inputs)]];
    case 'amqp': return [['DSN', r.dsn], ['exchange', r.exchange], ['routing key', r.routing_key]];
    case 'redis': return [['URL', r.url], ['command', r.command], ['key', r.key]];
    default: return Object.entries(r).filter(([k]) => k !== 'type').map(([k, v]) => [k, JSON.stringify(v)]);
  }
}

/** Non-empty lines of a textarea, trimmed: one runner argument or awf input per line. */
export function lines(text) {
  return String(text).split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
}

/** The request body of PUT /rules/{id} for the rule form's values. */
export function ruleBody(form) {
  const runner = { type: form.type };
  switch (form.type) {
    case 'shell': runner.command = form.command; break;
    case 'direct': runner.executable = form.executable; runner.args = lines(form.args); break;
    case 'http': runner.method = form.method; runner.url = form.url; break;
    case 'awf': runner.workflow = form.workflow; runner.inputs = lines(form.inputs); break;
    default: break; // the server names the unknown type
  }
  return { pattern: form.pattern, runner };
}

/** The header's line for a GET /cluster answer: the answering node and its role; null if it has neither. */
export function nodeLabel(view) {
  if (view === null || typeof view !== 'object' || typeof view.node !== 'string' || typeof view.role !== 'string') return null;
  return `node ${view.node} · ${view.role}`;
}

/**
 * A short nanosecond duration: "850 ns", "12.5 µs", "12.1 ms", "3.25 s", then formatDuration
 * ("2 min 5 s"). Negative values keep their sign. The raw text when it is not an integer.
 */
export function formatNs(ns) {
  if (!isIntegerText(ns)) return String(ns);
  const value = BigInt(ns);
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  if (abs >= 60n * NS_PER_SECOND) return sign + formatDuration(abs.toString());
  const n = Number(abs);
  for (const [unit, size] of [['s', 1e9], ['ms', 1e6], ['µs', 1e3]]) {
    if (n >= size) return `${sign}${Number((n / size).toPrecision(3))} ${unit}`;
  }
  return `${sign}${n} ns`;
}

/** A millisecond figure (lateness): "0.4 ms", "12 ms", "3.5 s", "2.1 min", "5 h", "3 d". */
export function formatMs(ms) {
  const v = Number(ms);
  if (!Number.isFinite(v)) return String(ms);
  const round = (x) => Number(x.toPrecision(x < 100 ? 2 : 3));
  const abs = Math.abs(v);
  if (abs < 1000) return `${Math.round(v * 10) / 10} ms`;
  if (abs < 60000) return `${round(v / 1000)} s`;
  if (abs < 3600000) return `${round(v / 60000)} min`;
  if (abs < 86400000) return `${round(v / 3600000)} h`;
  return `${Math.round(v / 86400000)} d`;
}

/** "5 s", "3 min", "2 h", "4 d": the largest whole unit of a positive millisecond span. */
export function roughSpan(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/**
 * An execution time relative to `nowMs`: "in 5 min" ahead, "now" within the second, and once
 * passed "3 s late" while the job still waits (planned or triggered) or "3 s ago" when it is
 * done. Empty for anything but an integer.
 */
export function relativeExecution(ns, status, nowMs) {
  if (!isIntegerText(ns)) return '';
  const diff = Number(BigInt(ns) / 1000000n) - nowMs;
  if (Math.abs(diff) < 1000) return 'now';
  if (diff > 0) return `in ${roughSpan(diff)}`;
  return status === 'planned' || status === 'triggered' ? `${roughSpan(-diff)} late` : `${roughSpan(-diff)} ago`;
}

/** The cursor of a `Link: </jobs?limit=100&cursor=42>; rel="next"` header; null without one. */
export function nextCursor(link) {
  const m = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '');
  if (m === null) return null;
  const query = m[1].includes('?') ? m[1].slice(m[1].indexOf('?') + 1) : '';
  return new URLSearchParams(query).get('cursor');
}

/** The query of one page of a listing: limit, cursor (null for the first page), prefix and status ('' = any). */
export function pageQuery({ limit, cursor = null, prefix = '', status = '' }) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (cursor !== null) query.set('cursor', cursor);
  if (prefix !== '') query.set('prefix', prefix);
  if (status !== '') query.set('status', status);
  return query.toString();
}

/**
 * The header's session line for a GET /whoami answer: "signed in as admin (namespace *)";
 * "signed in" alone while the answer is not known (or is not of that shape).
 */
export function principalLabel(whoami) {
  const { name, namespace } = whoami ?? {};
  if (typeof name !== 'string' || typeof namespace !== 'string') return 'signed in';
  return `signed in as ${name} (namespace ${namespace})`;
}

/** Jobs per status and in all, from GET /stats (service-wide, like STAT); '?' when missing. */
export function statusCounts(stats, statuses) {
  const pick = (key) => (isIntegerText(stats?.[key]) ? stats[key] : '?');
  return { ...Object.fromEntries(statuses.map((s) => [s, pick(`jobs_${s}`)])), total: pick('jobs_total') };
}

/** The outcome of an attempt in the runner's own terms, as [label, value] pairs (stderr apart). */
export function outcomeDetails(outcome) {
  const o = outcome ?? {};
  switch (o.kind) {
    case 'exit': return [['exit status', String(o.status)]];
    case 'signal': return [['signal', String(o.signal)]];
    case 'http_response': return [['HTTP status', String(o.status)]];
    case 'spawn_error': case 'network_error': case 'broker_error': case 'runner_error':
      return [['error', String(o.error ?? '')]];
    case 'delivered': return [['delivered', 'the broker or server confirmed it']];
    case 'no_rule': return [['rule', 'none matched the job']];
    case 'no_node': return [['node', `none live with the tags ${Array.isArray(o.on) ? o.on.join(', ') : '?'}`]];
    case 'aborted': return [['aborted', 'the daemon stopped while the runner ran']];
    default: return Object.entries(o).filter(([k]) => k !== 'kind').map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
}
