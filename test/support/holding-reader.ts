// A reader in a process of its own that holds a read transaction open on command (holding-reader.mjs),
// as Litestream, a long report query or a forgotten `sqlite3` shell does; killed after the test.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterThisTest } from './cleanup.js';

const HOLDING_READER = join(dirname(fileURLToPath(import.meta.url)), 'holding-reader.mjs');

export interface HoldingReader {
  /** Opens the read transaction; resolves with the reader's answer ("holding"). */
  hold(): Promise<string>;
  /** Ends it; resolves with the reader's answer ("released"). */
  release(): Promise<string>;
}

export function startHoldingReader(dbPath: string): HoldingReader {
  const child = spawn(process.execPath, [HOLDING_READER, dbPath], { stdio: ['pipe', 'pipe', 'pipe'] });
  afterThisTest('processes', () => child.kill('SIGKILL'));
  const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const tell = (command: 'hold' | 'release'): Promise<string> => {
    child.stdin.write(`${command}\n`);
    return answers.next().then((line) => String(line.value));
  };
  return { hold: () => tell('hold'), release: () => tell('release') };
}
