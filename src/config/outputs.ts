// The files the daemon writes besides the mirror: THREAT_MIRROR_EXPORTS and THREAT_MIRROR_SNAPSHOT,
// each refused when it (or a file written beside it) is one of the database's own files.
import { assertNotDatabaseFile } from '../db/database-files.js';
import { filesBesideSnapshot } from '../db/snapshot-files.js';
import { ConfigError } from '../lib/errors.js';
import { EXPORT_FORMATS, type ExportFormat, isExportFormat } from './export-formats.js';
import { type Environment, value } from './read.js';
import { EXPORTS, SNAPSHOT } from './variables.js';

export interface ExportTarget {
  readonly format: ExportFormat;
  readonly path: string;
}

/** `rpz=/data/threats.rpz,hosts=/data/hosts.txt`: each file once, each format as often as wanted. */
export function loadExports(env: Environment, dbPath: string): ExportTarget[] {
  const list = value(env, EXPORTS.name);
  if (list === undefined) return [];
  const seen = new Set<string>();
  return list
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const format = pair.slice(0, equals).trim();
      const path = pair.slice(equals + 1).trim();
      if (equals < 0 || path === '') throw new ConfigError(`${EXPORTS.name}: "${pair}" is not format=path`);
      if (!isExportFormat(format)) throw new ConfigError(`${EXPORTS.name}: "${format}" is not a format; formats are ${EXPORT_FORMATS.join(', ')}`);
      if (seen.has(path)) throw new ConfigError(`${EXPORTS.name}: ${path} is listed twice`);
      assertNotDatabaseFile(EXPORTS.name, path, dbPath);
      seen.add(path);
      return { format, path };
    });
}

export function loadSnapshotPath(env: Environment, dbPath: string): string | undefined {
  return assertNotDatabaseFile(SNAPSHOT.name, value(env, SNAPSHOT.name), dbPath, filesBesideSnapshot);
}
