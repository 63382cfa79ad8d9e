// What a command writes to and the exit codes it returns: shared by every command and the entry.
import { existsSync } from 'node:fs';
import { TerminalLine } from '../progress/terminal-line.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
/** lookup and status: the mirror cannot vouch (an organization never synced, stale, or its last run failed). */
export const EXIT_CANNOT_VOUCH = 3;

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /**
   * Present when stderr is a terminal that may show a redrawn progress line: its width now, and a
   * writer that keeps control characters (the line's redraw and erase sequences).
   */
  readonly terminal?: { readonly columns: () => number; readonly write: (text: string) => void } | undefined;
}

/** The read commands need a mirror to read: false (and a message naming the variable) when there is none. */
export function databaseExists(dbPath: string, io: Io): boolean {
  if (existsSync(dbPath)) return true;
  io.stderr(`threat-mirror: THREAT_MIRROR_DB: no database at ${dbPath}; run a sync first or point THREAT_MIRROR_DB at the mirror\n`);
  return false;
}

/** The progress line, where the terminal may show one (Io.terminal). */
export function terminalLineFor(io: Io): TerminalLine | undefined {
  return io.terminal === undefined ? undefined : new TerminalLine(io.terminal.write, io.terminal.columns);
}
