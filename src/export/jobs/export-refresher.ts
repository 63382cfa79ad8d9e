// THREAT_MIRROR_EXPORTS, the refresh job's second half (export-job-thread.ts): after every daemon
// run, each configured export file is brought up to date. A file is rewritten (atomically) only
// when its content changed, so its mtime, the signal resolvers and IDSs reload on, moves only then.
//
// Deciding "changed": the mirror's max(change_seq) moves on every insert, change, removal and
// restoration. While it stands still and the file is as this process left it (same mtime and
// size), nothing is read. Otherwise the export is rendered and compared byte for byte (sha256)
// with the file: a run that changed only threats no export carries (an address, a path-level URL
// for a host list) still leaves the file untouched.
import { stat } from 'node:fs/promises';
import type { Allowlist } from '../../allowlist/allowlist-entries.js';
import { matcherFor } from '../../allowlist/allow-matcher.js';
import { openDatabaseReadOnly } from '../../db/open-database.js';
import { errorMessage } from '../../lib/errors.js';
import { buildExport, buildHostExportFromIndex, selectSnapshotHosts } from '../build-export.js';
import { ThreatSnapshot } from '../current-threats.js';
import { type ExportFormat, type HostFormat, isHostFormat } from '../../config/export-formats.js';
import type { HostSelection } from '../host-selection.js';
import type { ExportIndex } from '../index/export-index.js';
import { laterSerial, nextZoneSerial, type ZoneTimers } from '../formats/rpz.js';
import { discardTempFile, fileDigest, writeTempFile } from '../atomic-file.js';
import { type FileWriteResult, serialOfFile, writeExportFile } from '../write-export.js';
import { withSmallPageCache } from '../../db/page-cache.js';

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
  /** The THREAT_MIRROR_ALLOWLIST version it was checked against (record formats); null: none. */
  readonly allowlist?: string | null;
  readonly mtimeMs: number;
  readonly size: number;
}

/** What a refresher knows between runs; the daemon refreshes on a new thread each time (export-job-client.ts) and hands it over. */
export interface RefresherState {
  /** Per file: the version it was last checked against and the file as that check left it. */
  readonly checked: ReadonlyArray<readonly [path: string, state: FileState]>;
  /** Whether the zone's serial has been set from an rpz file since the daemon started. */
  readonly serialAdopted: boolean;
}

/** What the refresher logs (a pino Logger, or lines forwarded from the export thread to the main thread's). */
export interface ExportLog {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

export class ExportRefresher {
  readonly #dbPath: string;
  readonly #targets: readonly ExportTarget[];
  readonly #logger: ExportLog;
  readonly #observer: ExportObserver | undefined;
  readonly #index: ExportIndex | undefined;
  readonly #timers: ZoneTimers | undefined;
  /** Per file: the change_seq (record formats) or hosts version (host formats) it was last checked against, and the file as that check left it. */
  readonly #checked: Map<string, FileState>;
  #serialAdopted: boolean;
  readonly #allowlist: Allowlist | undefined;

  /** With an index, host formats are written from it, and only when its host list changed. */
  constructor(options: {
    dbPath: string;
    targets: readonly ExportTarget[];
    logger: ExportLog;
    observer?: ExportObserver | undefined;
    index?: ExportIndex | undefined;
    timers?: ZoneTimers | undefined;
    state?: RefresherState | undefined;
    /** THREAT_MIRROR_ALLOWLIST as the daemon has it now: record formats leave out what it allows (the index has it for host formats). */
    allowlist?: Allowlist | undefined;
  }) {
    this.#dbPath = options.dbPath;
    this.#targets = options.targets;
    this.#logger = options.logger;
    this.#observer = options.observer;
    this.#index = options.index;
    this.#timers = options.timers;
    this.#checked = new Map(options.state?.checked);
    this.#serialAdopted = options.state?.serialAdopted ?? false;
    this.#allowlist = options.allowlist;
  }

  /** What the next refresh needs to know (a refresher of the next run is built from it). */
  state(): RefresherState {
    return { checked: [...this.#checked], serialAdopted: this.#serialAdopted };
  }

  /** Brings every export up to date; never throws (a failed export is logged and counted, the others go on). */
  async refresh(): Promise<void> {
    const recordTargets = this.#targets.filter((target) => this.#index === undefined || !isHostFormat(target.format));
    for (const target of this.#targets) {
      if (this.#index !== undefined && isHostFormat(target.format)) await this.#refreshFromIndex(target, target.format, this.#index);
    }
    if (recordTargets.length === 0) return;
    let opened;
    try {
      opened = openDatabaseReadOnly(this.#dbPath);
      withSmallPageCache(opened.sqlite);
    } catch (error) {
      this.#logger.error({ err: error }, `exports not refreshed: cannot open ${this.#dbPath}: ${errorMessage(error)}`);
      return;
    }
    const snapshot = new ThreatSnapshot(opened.sqlite, undefined, matcherFor(this.#allowlist?.entries));
    // Reading and canonicalizing every URL is most of a host list's cost: done once for all of them.
    let selection: Promise<HostSelection> | undefined;
    const hostSelection = (): Promise<HostSelection> => (selection ??= selectSnapshotHosts(snapshot));
    try {
      for (const target of recordTargets) await this.#refreshOne(target, snapshot, hostSelection);
    } finally {
      if (selection !== undefined) (await selection.catch(() => undefined))?.hosts.close();
      snapshot.close();
      // Not opened.close(): a reader has no business checkpointing the writer's WAL.
      opened.sqlite.close();
    }
  }

  /**
   * Before the first run: the zone takes the serial of the rpz file the last daemon left, when its
   * names are the index's (a restart that changed nothing keeps the secondaries' copy current), or
   * moves past both it and the index's (`nowMs`: the daemon's clock, nextZoneSerial). Nothing is
   * written: files are rewritten after runs only.
   */
  async adoptZoneSerial(nowMs: number): Promise<void> {
    const index = this.#index;
    const target = this.#targets.find((candidate) => candidate.format === 'rpz');
    this.#serialAdopted = true;
    if (index === undefined || target === undefined) return;
    const previous = await serialOfFile(target.path);
    if (previous === undefined) return;
    const built = buildHostExportFromIndex(index.view, 'rpz', previous, this.#timers);
    const temp = await writeTempFile(target.path, built.render(previous), built.commentPrefix);
    await discardTempFile(temp);
    const same = (await fileDigest(target.path, built.commentPrefix)) === temp.digest;
    index.adoptSerial(same ? previous : nextZoneSerial(laterSerial(index.view.state().serial, previous), nowMs));
  }

  /** A host format from the index: rewritten only when the host list changed or the file is not as this process left it. */
  async #refreshFromIndex(target: ExportTarget, format: HostFormat, index: ExportIndex): Promise<void> {
    const { path } = target;
    try {
      const state = index.view.state();
      const before = this.#checked.get(path);
      const current = await fileState(path);
      if (before !== undefined && current !== undefined && before.changeSeq === state.hostsVersion && sameFile(before, current)) {
        this.#logger.debug({ format, path, changeSeq: state.changeSeq }, 'export unchanged (no change in its hosts)');
        return;
      }
      const built = buildHostExportFromIndex(index.view, format, state.serial, this.#timers);
      const result = await writeExportFile(path, built);
      if (format === 'rpz' && !this.#serialAdopted) {
        // The first zone file written decides the serial the zone starts at (the DNS primary serves it).
        this.#serialAdopted = true;
        const written = await serialOfFile(path);
        if (written !== undefined && written !== state.serial) index.adoptSerial(written);
      }
      await this.#recordCheck(target, index.view.state().hostsVersion, result);
    } catch (error) {
      this.#failed(target, error);
    }
  }

  async #refreshOne(target: ExportTarget, snapshot: ThreatSnapshot, hostSelection: () => Promise<HostSelection>): Promise<void> {
    const { format, path } = target;
    try {
      const before = this.#checked.get(path);
      const current = await fileState(path);
      const allowlist = this.#allowlist?.version ?? null;
      if (before !== undefined && current !== undefined && before.changeSeq === snapshot.changeSeq && (before.allowlist ?? null) === allowlist && sameFile(before, current)) {
        this.#logger.debug({ format, path }, 'export unchanged (no change in the mirror)');
        return;
      }
      const selection = isHostFormat(format) ? await hostSelection() : undefined;
      const built = await buildExport(snapshot, { format, organization: undefined, selection, timers: this.#timers });
      const result = await writeExportFile(path, built);
      await this.#recordCheck(target, snapshot.changeSeq, result, allowlist);
    } catch (error) {
      this.#failed(target, error);
    }
  }

  async #recordCheck({ format, path }: ExportTarget, version: number, result: FileWriteResult, allowlist: string | null = null): Promise<void> {
    const after = await fileState(path);
    if (after === undefined) throw new Error(`${path} is gone right after it was written`);
    this.#checked.set(path, { ...after, changeSeq: version, allowlist });
    this.#observer?.exportChecked(format, path, result.entries, after.mtimeMs);
    if (result.written) this.#logger.info({ format, path, entries: result.entries }, 'export written');
    else this.#logger.debug({ format, path, entries: result.entries }, 'export unchanged (same content)');
  }

  #failed({ format, path }: ExportTarget, error: unknown): void {
    this.#observer?.exportFailed(format, path);
    this.#logger.error({ err: error, format, path }, `export ${format} to ${path} failed: ${errorMessage(error)}; the previous file is left as it was`);
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
