// A key given twice in one JSON object. JSON.parse keeps the last value and says nothing, so
// `{"every":"1s","every":"5m"}` would silently be a five-minute schedule, where the TCP form
// of the same fields answers `every: given twice`. Request bodies (body.ts) are refused
// instead; RFC 8259 leaves duplicate names to the receiver ("unpredictable").
//
// Only ever given text JSON.parse accepted, so the grammar is not checked again: a string is
// a key when it comes first in an object or right after a comma in one. Iterative (a stack
// of the open objects' keys, null for an open array), so nesting depth costs no call stack;
// one pass over a body of at most MAX_BODY_BYTES.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** The first key that an object of `json` (valid JSON) holds twice, decoded; null when none. */
export function firstDuplicateKey(json: string): string | null {
  const open: (Set<string> | null)[] = [];
  let keyNext = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      let escaped = false;
      for (;;) {
        const d = json.charCodeAt(end);
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          escaped = true;
          end += 2;
        } else {
          end++;
        }
      }
      if (keyNext) {
        // "a" and "\u0061" are the same name: an escaped key is compared decoded.
        const key = escaped ? (JSON.parse(json.slice(i, end + 1)) as string) : json.slice(i + 1, end);
        const keys = open[open.length - 1]!;
        if (keys.has(key)) return key;
        keys.add(key);
        keyNext = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) {
      open.push(new Set());
      keyNext = true;
    } else if (c === OPEN_ARRAY) {
      open.push(null);
      keyNext = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      keyNext = false;
    } else if (c === COMMA) {
      keyNext = open[open.length - 1] instanceof Set;
    }
  }
  return null;
}
