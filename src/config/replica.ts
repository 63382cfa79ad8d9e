// THREAT_MIRROR_RESTORE_FROM and THREAT_MIRROR_LITESTREAM: where a new file is restored from, and
// with which Litestream binary (session/replica-restore.ts; docs/readers-and-replicas.md).
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ConfigError } from '../lib/errors.js';
import { packageRoot } from '../lib/package-root.js';
import { type Environment, value } from './read.js';
import { LITESTREAM, RESTORE_FROM } from './variables.js';

/** The replica types Litestream 0.3 restores from, by URL scheme. */
const REPLICA_SCHEMES = ['s3:', 'gcs:', 'abs:', 'sftp:', 'file:'];

export interface ReplicaConfig {
  /** A Litestream replica URL (s3://bucket/path, file:///path); an absolute path stands for a file replica. */
  readonly url: string;
  /** The litestream binary: THREAT_MIRROR_LITESTREAM, the optional dependency's, or `litestream` on the PATH. */
  readonly litestream: string;
}

export function loadReplica(env: Environment): ReplicaConfig | undefined {
  const url = value(env, RESTORE_FROM.name);
  if (url === undefined) return undefined;
  if (!isAbsolute(url)) {
    let scheme: string;
    try {
      scheme = new URL(url).protocol;
    } catch {
      throw new ConfigError(`${RESTORE_FROM.name}: "${url}" is not a replica URL (s3://bucket/path, file:///path) nor an absolute path`);
    }
    if (!REPLICA_SCHEMES.includes(scheme)) throw new ConfigError(`${RESTORE_FROM.name}: "${url}" is not a replica Litestream 0.3 restores from (${REPLICA_SCHEMES.join(', ')})`);
  }
  return { url, litestream: value(env, LITESTREAM.name) ?? bundledLitestream() ?? 'litestream' };
}

/** The binary of the optional dependency @flydotio/litestream-<platform>-<arch>, when installed. */
function bundledLitestream(): string | undefined {
  const path = join(packageRoot(), 'node_modules', '@flydotio', `litestream-${process.platform}-${process.arch}`, 'litestream');
  return existsSync(path) ? path : undefined;
}
