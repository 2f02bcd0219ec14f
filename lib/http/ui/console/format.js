// Pure helpers of the console (no DOM): exact JSON parsing, nanosecond timestamps and runner
// descriptions. Invariant: an integer from the API never passes through a JS number. The API
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

/** Counts per status (every status present, zero when absent) and the total. */
export function countByStatus(jobs, statuses) {
  const counts = Object.fromEntries(statuses.map((s) => [s, 0]));
  for (const job of jobs) counts[job.status] = (counts[job.status] ?? 0) + 1;
  return { counts, total: jobs.length };
}
