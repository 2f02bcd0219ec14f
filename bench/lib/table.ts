// Renders the suite's results as ONE plain-text table (figure, value, target, the command that
// reproduces the row alone), followed by the figures' notes keyed by their number. Plain text
// on purpose: it pastes into an issue or bench/README.md as is.
import { meets, type Figure } from './suite.ts';

export interface ResultLine {
  readonly figure: Figure;
  readonly reproduce: string;
}

export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function valueText(f: Figure): string {
  return f.value === null ? 'n/a' : `${formatNumber(f.value, f.digits)} ${f.unit}`;
}

function targetText(f: Figure): string {
  if (f.target === undefined) return '';
  const bound = `${f.target.op} ${formatNumber(f.target.value)} ${f.unit}`;
  if (f.value === null) return bound;
  return `${bound} ${meets(f.target, f.value) ? 'met' : 'MISSED'}`;
}

export function renderTable(lines: readonly ResultLine[]): string {
  const header = ['#', 'figure', 'value', 'target', 'reproduce alone'];
  const rows = lines.map((l, i) => [String(i + 1), l.figure.label, valueText(l.figure), targetText(l.figure), l.reproduce]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  // Values right-aligned so that magnitudes line up; everything else left-aligned.
  const fmt = (r: string[]) => r.map((cell, c) => (c === 2 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join(' | ').trimEnd();
  const out = [fmt(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(fmt)];
  const notes = lines.flatMap((l, i) => (l.figure.note === undefined ? [] : [`[${i + 1}] ${l.figure.note}`]));
  if (notes.length > 0) out.push('', ...notes);
  return out.join('\n');
}
