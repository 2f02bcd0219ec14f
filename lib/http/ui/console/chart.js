// The activity chart: jobs fired, executed and failed per second and the runners' lateness
// (median and greatest, ms) over the last minutes, from GET /activity (300 one-second buckets,
// oldest first, the last still filling). Drawn as inline SVG by this module: no library, no
// fetch of its own. Invariants: the still-filling bucket is left out (it would always dip);
// a second without a runner start (lateness null) is a gap, not a zero; the SVG is scaled by
// its viewBox (one unit per second, 100 units high) and the DOM is touched only where a value
// changed. The pure part (chartModel, linePath, niceCeil) runs in Node for the unit tests.
import { formatMs } from './format.js';

export const HEIGHT = 100;
const COUNT_SERIES = ['fired', 'executed', 'failed'];
const LATENESS_SERIES = [['p50', 'lateness_p50_ms'], ['max', 'lateness_max_ms']];

/** A number from the API (exact integers arrive as strings); null stays null. */
function num(value) {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** The smallest of 1, 2, 5 × 10^k that is >= v (1 at least): a readable top of the axis. */
export function niceCeil(v) {
  if (!(v > 1)) return 1;
  const base = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 5, 10]) if (step * base >= v) return step * base;
  return 10 * base;
}

/**
 * SVG path data for `values` (one per x unit) on an axis from 0 to `max`, `HEIGHT` high;
 * null values break the line (a lone value is a dot). Coordinates are rounded to 0.1 to keep the string short.
 */
export function linePath(values, max) {
  const parts = [];
  let pen = false;
  values.forEach((v, x) => {
    if (v === null) {
      pen = false;
      return;
    }
    const y = Math.round((HEIGHT - (Math.min(v, max) / max) * HEIGHT) * 10) / 10;
    // A lone point (gaps both sides) is a zero-length segment: round caps draw it as a dot.
    const alone = !pen && (values[x + 1] ?? null) === null;
    parts.push(`${pen ? 'L' : 'M'}${x} ${y}${alone ? 'h0' : ''}`);
    pen = true;
  });
  return parts.join('');
}

const sum = (values) => values.reduce((a, b) => a + (b ?? 0), 0);
const most = (values) => values.reduce((a, b) => (b !== null && (a === null || b > a) ? b : a), null);

/** Everything the chart shows, from a GET /activity body; null when it has no complete bucket. */
export function chartModel(activity) {
  const all = Array.isArray(activity?.buckets) ? activity.buckets : [];
  const buckets = all.slice(0, -1); // the last one is the current second, still filling
  if (buckets.length < 2) return null;
  const counts = Object.fromEntries(COUNT_SERIES.map((k) => [k, buckets.map((b) => num(b[k]) ?? 0)]));
  const lateness = Object.fromEntries(LATENESS_SERIES.map(([name, key]) => [name, buckets.map((b) => num(b[key]))]));
  const countMax = niceCeil(Math.max(...COUNT_SERIES.map((k) => Math.max(...counts[k]))));
  const latenessMax = niceCeil(most(lateness.max) ?? 0);
  const minute = (values) => values.slice(-60);
  const seconds = buckets.length;
  return {
    seconds,
    spanMs: seconds * (num(activity.interval_ms) ?? 1000),
    counts, lateness, countMax, latenessMax,
    lastMinute: {
      fired: sum(minute(counts.fired)),
      executed: sum(minute(counts.executed)),
      failed: sum(minute(counts.failed)),
      latenessMax: most(minute(lateness.max)),
      latenessP50: minute(lateness.p50).filter((v) => v !== null).at(-1) ?? null,
    },
  };
}

const ms = (v) => (v === null ? 'none' : formatMs(v));

/** One sentence of the last minute (the chart's caption and its text alternative). */
export function describeMinute(model) {
  if (model === null) return 'No activity recorded yet.';
  const m = model.lastMinute;
  const late = m.latenessMax === null ? 'no runner started' : `runner lateness up to ${ms(m.latenessMax)}, latest median ${ms(m.latenessP50)}`;
  return `Last minute: ${m.fired} fired, ${m.executed} executed, ${m.failed} failed; ${late}.`;
}

function setAttr(node, name, value) {
  if (node !== null && node.getAttribute(name) !== value) node.setAttribute(name, value);
}

function setText(node, value) {
  if (node !== null && node.textContent !== value) node.textContent = value;
}

/** Draws `activity` into the chart markup of index.html (elements found by data-chart). */
export function renderChart(root, activity) {
  const model = chartModel(activity);
  const part = (name) => root.querySelector(`[data-chart="${name}"]`);
  setText(part('summary'), describeMinute(model));
  root.classList.toggle('chart-empty', model === null);
  if (model === null) return;
  const viewBox = `0 0 ${model.seconds - 1} ${HEIGHT}`;
  for (const svg of root.querySelectorAll('svg')) setAttr(svg, 'viewBox', viewBox);
  for (const k of COUNT_SERIES) setAttr(part(k), 'd', linePath(model.counts[k], model.countMax));
  for (const [name] of LATENESS_SERIES) setAttr(part(`lateness-${name}`), 'd', linePath(model.lateness[name], model.latenessMax));
  setText(part('counts-max'), `${model.countMax}/s`);
  setText(part('lateness-max'), formatMs(model.latenessMax));
  setText(part('span'), `${Math.round(model.spanMs / 60000)} min ago`);
}
