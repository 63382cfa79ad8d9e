// THREAT_MIRROR_EXPORTS: after every daemon run, each configured export file is brought up to
// date. A file is rewritten (atomically) only when its content changed, so its mtime, the signal
// resolvers and IDSs reload on, moves only then.
//
// Deciding "changed": the mirror's max(change_seq) moves on every insert, change, removal and
// restoration. While it stands still and the file is as this process left it (same mtime and
// size), nothing is read. Otherwise the export is rendered and compared byte for byte (sha256)
// with the file: a run that changed only threats no export carries (an address, a path-level URL
// for a host list) still leaves the file untouched.
import { stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { errorMessage } from '../lib/errors.js';
import { buildExport } from './build-export.js';
import { ThreatSnapshot } from './current-threats.js';
import { type ExportFormat, isHostFormat } from '../config/export-formats.js';
import { type HostSelection, selectHosts } from './host-selection.js';
import { writeExportFile } from './write-export.js';

export interface ExportTarget {
  readonly format: ExportFormat;
  readonly path: string;
}

/** What /metrics shows of the exports; implemented by MirrorMetrics. */
export interface ExportObserver {
  exportChecked(format: ExportFormat, path: string, entries: number, lastWriteMs: number): void;
  exportFailed(format: ExportFormat, path: string): void;
}

interface FileState {
  readonly changeSeq: number;
  readonly mtimeMs: number;
  readonly size: number;
}

export class ExportRefresher {
  readonly #dbPath: string;
  readonly #targets: readonly ExportTarget[];
  readonly #logger: Logger;
  readonly #observer: ExportObserver | undefined;
  /** Per file: the change_seq it was last checked against, and the file as that check left it. */
  readonly #checked = new Map<string, FileState>();

  constructor(options: { dbPath: string; targets: readonly ExportTarget[]; logger: Logger; observer?: ExportObserver | undefined }) {
    this.#dbPath = options.dbPath;
    this.#targets = options.targets;
    this.#logger = options.logger;
    this.#observer = options.observer;
  }

  /** Brings every export up to date; never throws (a failed export is logged and counted, the others go on). */
  async refresh(): Promise<void> {
    let opened;
    try {
      opened = openDatabaseReadOnly(this.#dbPath);
    } catch (error) {
      this.#logger.error({ err: error }, `exports not refreshed: cannot open ${this.#dbPath}: ${errorMessage(error)}`);
      return;
    }
    const snapshot = new ThreatSnapshot(opened.sqlite, undefined);
    // Reading and canonicalizing every URL is most of a host list's cost: done once for all of them.
    let selection: Promise<HostSelection> | undefined;
    const hostSelection = (): Promise<HostSelection> => (selection ??= selectHosts(snapshot.threats()));
    try {
      for (const target of this.#targets) await this.#refreshOne(target, snapshot, hostSelection);
    } finally {
      if (selection !== undefined) (await selection.catch(() => undefined))?.hosts.close();
      snapshot.close();
      // Not opened.close(): a reader has no business checkpointing the writer's WAL.
      opened.sqlite.close();
    }
  }

  async #refreshOne(target: ExportTarget, snapshot: ThreatSnapshot, hostSelection: () => Promise<HostSelection>): Promise<void> {
    const { format, path } = target;
    try {
      const before = this.#checked.get(path);
      const current = await fileState(path);
      if (before !== undefined && current !== undefined && before.changeSeq === snapshot.changeSeq && sameFile(before, current)) {
        this.#logger.debug({ format, path }, 'export unchanged (no change in the mirror)');
        return;
      }
      const selection = isHostFormat(format) ? await hostSelection() : undefined;
      const built = await buildExport(snapshot, { format, organization: undefined, selection });
      const result = await writeExportFile(path, built);
      const after = await fileState(path);
      if (after === undefined) throw new Error(`${path} is gone right after it was written`);
      this.#checked.set(path, { ...after, changeSeq: snapshot.changeSeq });
      this.#observer?.exportChecked(format, path, result.entries, after.mtimeMs);
      if (result.written) this.#logger.info({ format, path, entries: result.entries }, 'export written');
      else this.#logger.debug({ format, path, entries: result.entries }, 'export unchanged (same content)');
    } catch (error) {
      this.#observer?.exportFailed(format, path);
      this.#logger.error({ err: error, format, path }, `export ${format} to ${path} failed: ${errorMessage(error)}; the previous file is left as it was`);
    }
  }
}

async function fileState(path: string): Promise<Omit<FileState, 'changeSeq'> | undefined> {
  try {
    const stats = await stat(path);
    return { mtimeMs: stats.mtimeMs, size: stats.size };
  } catch {
    return undefined;
  }
}

function sameFile(a: Omit<FileState, 'changeSeq'>, b: Omit<FileState, 'changeSeq'>): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size;
}
