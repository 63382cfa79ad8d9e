// THREAT_MIRROR_RESTORE_FROM, THREAT_MIRROR_RESTORE_CONFIG and THREAT_MIRROR_LITESTREAM: where a
// new file is restored from, and with which Litestream binary (session/replica-restore.ts;
// docs/readers-and-replicas.md). Litestream 0.3 is strict about what it takes: a URL it misreads
// is refused here (exit 2) rather than failing at every start of a pod (exit 1).
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ConfigError } from '../lib/errors.js';
import { packageRoot } from '../lib/package-root.js';
import { type Environment, value } from './read.js';
import { LITESTREAM, RESTORE_CONFIG, RESTORE_FROM } from './variables.js';

/** The replica types Litestream 0.3 restores from, by URL scheme. */
const REPLICA_SCHEMES = ['s3:', 'gcs:', 'abs:', 'sftp:', 'file:'];
/** Schemes whose host is a bucket (or container): Litestream needs one. */
const BUCKET_SCHEMES = ['s3:', 'gcs:', 'abs:'];

export interface ReplicaConfig {
  /** The variable that named the replica, for messages. */
  readonly variable: string;
  /** What the replica is, for messages: a replica URL (an absolute path made `file://`), or `the replica of DB in FILE`. */
  readonly url: string;
  /** What `litestream restore -if-replica-exists -o OUT` is given after its options: the URL, or `-config FILE DB`. */
  readonly source: readonly string[];
  /** The litestream binary: THREAT_MIRROR_LITESTREAM, the optional dependency's, or `litestream` on the PATH. */
  readonly litestream: string;
}

export function loadReplica(env: Environment, dbPath: string): ReplicaConfig | undefined {
  const from = value(env, RESTORE_FROM.name);
  const configFile = value(env, RESTORE_CONFIG.name);
  if (from !== undefined && configFile !== undefined) throw new ConfigError(`${RESTORE_CONFIG.name}: set it or ${RESTORE_FROM.name}, not both (the file names the replica)`);
  if (from === undefined && configFile === undefined) return undefined;
  const litestream = litestreamBinary(env);
  if (configFile !== undefined) {
    if (!isAbsolute(configFile) || !existsSync(configFile) || !statSync(configFile).isFile()) {
      throw new ConfigError(`${RESTORE_CONFIG.name}: "${configFile}" is not the absolute path of a Litestream configuration file`);
    }
    return { variable: RESTORE_CONFIG.name, url: `the replica of ${dbPath} in ${configFile}`, source: ['-config', configFile, dbPath], litestream };
  }
  const url = replicaUrl(from as string);
  return { variable: RESTORE_FROM.name, url, source: [url], litestream };
}

/** The URL Litestream is given: checked for what Litestream 0.3 would misread; an absolute path as a `file://` URL. */
function replicaUrl(from: string): string {
  // Litestream 0.3 takes anything without "://" for a database path in /etc/litestream.yml.
  if (isAbsolute(from)) return `file://${from}`;
  const notAUrl = `${RESTORE_FROM.name}: "${from}" is not a replica URL (s3://bucket/path, file:///path) nor an absolute path`;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(from)) throw new ConfigError(notAUrl);
  let url: URL;
  try {
    url = new URL(from);
  } catch {
    throw new ConfigError(notAUrl);
  }
  if (!REPLICA_SCHEMES.includes(url.protocol)) throw new ConfigError(`${RESTORE_FROM.name}: "${from}" is not a replica Litestream 0.3 restores from (${REPLICA_SCHEMES.join(', ')})`);
  if (BUCKET_SCHEMES.includes(url.protocol) && url.hostname === '') throw new ConfigError(`${RESTORE_FROM.name}: "${from}" names no bucket`);
  if (url.protocol === 'file:' && url.pathname.replace(/\/+$/, '') === '') throw new ConfigError(`${RESTORE_FROM.name}: "${from}" names no folder`);
  // Litestream 0.3 reads an endpoint from the host only as BUCKET.localhost[:PORT]; any other
  // host:port is taken for an AWS bucket, its port dropped, and the restore goes to AWS.
  if (url.protocol === 's3:' && url.port !== '' && !url.hostname.endsWith('.localhost')) {
    throw new ConfigError(
      `${RESTORE_FROM.name}: "${from}": Litestream 0.3 reads an S3 endpoint from the URL only as BUCKET.localhost:PORT (it would send this one to AWS); for another endpoint (MinIO, ...) set ${RESTORE_CONFIG.name} to a Litestream configuration file with the replica's endpoint`,
    );
  }
  return from;
}

function litestreamBinary(env: Environment): string {
  const named = value(env, LITESTREAM.name);
  if (named === undefined) return bundledLitestream() ?? 'litestream';
  // A bare name is looked up on the PATH when the restore runs; a path can be checked now.
  if (named.includes('/')) {
    try {
      accessSync(named, constants.X_OK);
      if (!statSync(named).isFile()) throw new Error('not a file');
    } catch {
      throw new ConfigError(`${LITESTREAM.name}: "${named}" is not an executable file`);
    }
  }
  return named;
}

/** The binary of the optional dependency @flydotio/litestream-<platform>-<arch>, when installed. */
function bundledLitestream(): string | undefined {
  const path = join(packageRoot(), 'node_modules', '@flydotio', `litestream-${process.platform}-${process.arch}`, 'litestream');
  return existsSync(path) ? path : undefined;
}
