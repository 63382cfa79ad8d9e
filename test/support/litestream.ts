// The real Litestream 0.3.13 of the optional dependency, as the tests that replicate and restore run it.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LITESTREAM = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '@flydotio', `litestream-${process.platform}-${process.arch}`, 'litestream');

/** Why the tests that need Litestream cannot run here (for skipFor); undefined when they can. */
export const LITESTREAM_MISSING = existsSync(LITESTREAM) ? undefined : `no Litestream binary at ${LITESTREAM} (npm ci installs @flydotio/litestream-linux-x64 on linux-x64)`;

export interface Replicating {
  readonly process: ChildProcess;
  /** Its exit code, once it exits. */
  readonly exited: Promise<number | null>;
  /** What it has printed so far. */
  output(): string;
}

/**
 * `litestream replicate -config CONFIG`, resolved once its first snapshot is written (a restore
 * needs one: stopping it before would leave nothing to restore). The caller stops it.
 */
export async function startReplicating(config: string): Promise<Replicating> {
  let log = '';
  const replicator = spawn(LITESTREAM, ['replicate', '-config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => replicator.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: string): void => {
      log += chunk;
      if (log.includes('msg="snapshot written"')) resolve();
    };
    replicator.stdout.setEncoding('utf8').on('data', read);
    replicator.stderr.setEncoding('utf8').on('data', read);
    void exited.then((code) => reject(new Error(`litestream exited (${code}) before writing a snapshot: ${log}`)));
  });
  return { process: replicator, exited, output: () => log };
}
