// Splits one protocol line into arguments (tickd-protocol(7) GRAMMAR).
//
// Grammar:
// - Only the space character (0x20) separates arguments; runs of spaces count as one, and
//   leading/trailing spaces are ignored. Tabs and other characters are ordinary.
// - A double quote opens a quoted section, which runs to the next unescaped double quote.
//   Inside it, a backslash makes the next character literal (`\"` -> `"`, `\\` -> `\`,
//   `\x` -> `x`). Outside quotes a backslash is an ordinary character.
// - Quoted sections join the characters around them into one argument, as in a POSIX shell:
//   `a"b c"d` is the single argument `ab cd`, and `--input msg="hello world"` gives
//   `msg=hello world`. `""` on its own is an empty argument.
// - An unterminated quote (including a final backslash inside quotes) makes the line
//   malformed: the result is null.

const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function tokenize(line: string): string[] | null {
  // Fast path: most lines have no quotes at all.
  if (line.indexOf('"') === -1) {
    const parts = line.split(' ');
    const tokens: string[] = [];
    for (const p of parts) if (p !== '') tokens.push(p);
    return tokens;
  }
  return tokenizeQuoted(line);
}

function tokenizeQuoted(line: string): string[] | null {
  const tokens: string[] = [];
  let current = '';
  let inToken = false;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c === SPACE) {
      if (inToken) {
        tokens.push(current);
        current = '';
        inToken = false;
      }
      i++;
    } else if (c === QUOTE) {
      inToken = true;
      i++;
      let closed = false;
      let runStart = i;
      while (i < n) {
        const q = line.charCodeAt(i);
        if (q === QUOTE) {
          current += line.slice(runStart, i);
          closed = true;
          i++;
          break;
        }
        if (q === BACKSLASH) {
          if (i + 1 >= n) return null;
          current += line.slice(runStart, i) + line[i + 1];
          i += 2;
          runStart = i;
        } else {
          i++;
        }
      }
      if (!closed) return null;
    } else {
      // An unquoted run up to the next space or quote.
      let j = i + 1;
      while (j < n) {
        const u = line.charCodeAt(j);
        if (u === SPACE || u === QUOTE) break;
        j++;
      }
      current += line.slice(i, j);
      inToken = true;
      i = j;
    }
  }
  if (inToken) tokens.push(current);
  return tokens;
}
