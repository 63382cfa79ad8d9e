// Recovers the source text of a top-level member of a JSON body, or of the elements of an array
// member. Node 20's JSON.parse gives no access to source text, and a number beyond 2^53 loses
// digits once parsed: this is how a record is kept exactly as the service sent it, and how an id
// or a cursor beyond 2^53 keeps its digits. It runs only on bodies that JSON.parse has already
// accepted, and only when there is something to keep (off the threats' hot path).

/**
 * The element texts of the array `member` of the top-level object in `text`, in order; the last
 * such member when it repeats, as JSON.parse keeps the last. Undefined when there is none.
 */
export function rawArrayElements(text: string, member: string): string[] | undefined {
  const array = rawMember(text, member);
  if (array === undefined || array[0] !== '[') return undefined;
  const elements: string[] = [];
  let position = skipSpace(array, 1);
  while (position < array.length && array[position] !== ']') {
    const end = endOfValue(array, position);
    elements.push(array.slice(position, end));
    position = skipSpace(array, end);
    if (array[position] === ',') position = skipSpace(array, position + 1);
  }
  return elements;
}

/**
 * The source text of the value of `member` in the top-level object in `text` (the last when it
 * repeats, as JSON.parse keeps the last); undefined when there is none. Used for a number beyond
 * 2^53, whose digits JSON.parse has already lost.
 */
export function rawMember(text: string, member: string): string | undefined {
  let position = skipSpace(text, 0);
  if (text[position] !== '{') return undefined;
  position = skipSpace(text, position + 1);
  let found: string | undefined;
  while (position < text.length && text[position] !== '}') {
    const keyEnd = endOfString(text, position);
    const key = JSON.parse(text.slice(position, keyEnd)) as string;
    position = skipSpace(text, keyEnd);
    position = skipSpace(text, position + 1); // the colon
    const end = endOfValue(text, position);
    if (key === member) found = text.slice(position, end);
    position = skipSpace(text, end);
    if (text[position] === ',') position = skipSpace(text, position + 1);
  }
  return found;
}

function skipSpace(text: string, position: number): number {
  let at = position;
  while (at < text.length && (text[at] === ' ' || text[at] === '\n' || text[at] === '\r' || text[at] === '\t')) at += 1;
  return at;
}

/** `position` is at an opening quote; returns the index just past the closing one. */
function endOfString(text: string, position: number): number {
  let at = position + 1;
  for (;;) {
    const close = text.indexOf('"', at);
    if (close < 0) return text.length;
    let backslashes = 0;
    while (text[close - 1 - backslashes] === '\\') backslashes += 1;
    if (backslashes % 2 === 0) return close + 1;
    at = close + 1;
  }
}

/** The index just past the value that starts at `position`. */
function endOfValue(text: string, position: number): number {
  const first = text[position];
  if (first === '"') return endOfString(text, position);
  if (first === '{' || first === '[') {
    let depth = 0;
    let at = position;
    while (at < text.length) {
      const char = text[at];
      if (char === '"') {
        at = endOfString(text, at);
        continue;
      }
      if (char === '{' || char === '[') depth += 1;
      else if (char === '}' || char === ']') {
        depth -= 1;
        if (depth === 0) return at + 1;
      }
      at += 1;
    }
    return at;
  }
  // A number, true, false or null: runs to the next delimiter.
  let at = position;
  while (at < text.length && !',]} \n\r\t'.includes(text[at] as string)) at += 1;
  return at;
}
