// One line on a terminal that redraws in place (the progress line), and the choice of drawing it.
import type { Environment } from '../config.js';
import { escapeControls } from '../lib/terminal-text.js';

/**
 * A redrawn line only where a person watches a terminal that understands it: stderr a TTY, and
 * neither NO_COLOR (no-color.org: set and not empty) nor TERM=dumb asking for plain output. Plain
 * output gets the `progress` log records instead (docs/operations.md, "Progress").
 */
export function drawsProgressLine(env: Environment, stderr: { readonly isTTY?: boolean }): boolean {
  if (stderr.isTTY !== true) return false;
  if ((env.NO_COLOR ?? '') !== '') return false;
  return env.TERM !== 'dumb';
}

export class TerminalLine {
  readonly #write: (text: string) => void;
  readonly #columns: () => number;
  #drawn = false;

  /** `columns`: the terminal's width now (it may be resized while the line is drawn). */
  constructor(write: (text: string) => void, columns: () => number) {
    this.#write = write;
    this.#columns = columns;
  }

  /** Replaces the line: back to its start, the text, the rest of the old line erased. */
  draw(text: string): void {
    // A line that wraps cannot be redrawn with a carriage return: cut it to the width.
    const width = Math.max(20, this.#columns() - 1);
    const shown = escapeControls(text);
    this.#write(`\r${shown.length > width ? `${shown.slice(0, width - 1)}…` : shown}\x1b[K`);
    this.#drawn = true;
  }

  /** Erases the line, so that what is written next (a log line) starts on a clean one. */
  clear(): void {
    if (!this.#drawn) return;
    this.#write('\r\x1b[K');
    this.#drawn = false;
  }

  /** Erases the line and leaves `text` in its place, ended by a newline. */
  finish(text: string): void {
    this.clear();
    this.#write(`${escapeControls(text)}\n`);
  }
}
