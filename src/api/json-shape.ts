// A bound on what JSON.parse builds from a response, checked on the text before it runs. Memory
// follows the number of values, not the bytes: a 400 KB body of 200,000 one-digit records ran the
// CLI's 48 MB heap out, and an id nested a million levels deep aborted the process in JSON.parse.

export interface JsonShapeLimits {
  /** Containers nested inside each other: a page's record is at depth 3, its fields below. */
  readonly maxDepth: number;
  /** Values in all (an upper bound: containers opened plus commas, plus one). */
  readonly maxValues: number;
}

/**
 * Far above any page the service documents (100 records of 4 fields: ~500 values at depth 3),
 * far below what hurts (4 pages in flight of 100,000 values is ~10 MB of parsed heap).
 */
export const RESPONSE_SHAPE_LIMITS: JsonShapeLimits = { maxDepth: 32, maxValues: 100_000 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * Why the text would build more than the limits allow, or undefined. One pass, linear, no
 * allocation: a string's contents (most of a page: its URLs) are skipped with indexOf, so a page
 * of 100 costs about a third to three quarters of its JSON.parse (20-60 µs, test/bench/page-bounds.ts,
 * docs/performance.md). Text that is not JSON at all passes here and fails in JSON.parse.
 */
export function jsonShapeProblem(text: string, limits: JsonShapeLimits = RESPONSE_SHAPE_LIMITS): string | undefined {
  let depth = 0;
  let values = 1;
  const length = text.length;
  for (let at = 0; at < length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = endOfString(text, at);
      if (at < 0) return undefined;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth += 1;
      values += 1;
      if (depth > limits.maxDepth) return `nests values more than ${limits.maxDepth} levels deep`;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth -= 1;
    } else if (code === COMMA) {
      values += 1;
    } else {
      continue;
    }
    if (values > limits.maxValues) return `holds more than ${limits.maxValues} values`;
  }
  return undefined;
}

/** `open` is at an opening quote: the index of its closing quote, or -1 when there is none. */
function endOfString(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close > 0) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
  return -1;
}
