// The daemon's export index: which host every current threat blocks, the host list with a count
// of threats per host, the zone's serial and its recent history. Built once from the mirror when
// the daemon starts, then brought up to date after each run from the change feed (threats whose
// change_seq moved), so that the work after a run is in proportion to what changed, not to the
// mirror's size. Host-format files, the DNS zone and the feeds all read it (index-view.ts); its
// tables are in schema.ts.
//
// THREAT_MIRROR_ALLOWLIST: a threat it allows takes the kind `allowed` (no host), and the hosts it
// allows as a whole are the zone's passthru names; a new version of the list is applied like a
// change feed of its own (index-allowlist.ts), as one more step of the zone.
//
// It is a SQLite file of its own, in WAL mode, beside the mirror (never the mirror itself). Its one
// writer is the daemon's refresh job, on a short-lived thread of its own, one job at a time
// (export/jobs/); the serving thread and feed jobs read it on read-only connections. The
// mirror is only ever read, on a read-only connection.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Allowlist } from '../../allowlist/allowlist-entries.js';
import { sqliteFilesOf } from '../../db/database-files.js';
import { openDatabaseReadOnly } from '../../db/open-database.js';
import { Database, type Statement } from '../../db/sqlite.js';
import { allowedThreatIds } from '../allowed-threats.js';
import { allowsRow, CURRENT, HOST_COLUMNS, type IndexAllowlist, indexAllowlistOf, indexEntryOf, passthruChange, THREAT_COLUMNS, type ThreatRow, threatsAllowednessChanged } from './index-allowlist.js';
import { IndexView } from './index-view.js';
import { continuedSerial, setAside } from './previous-index.js';
import { INDEX_SCHEMA, type ZoneName } from './schema.js';
import type { OwnerRecord } from '../formats/zone-names.js';
import { MAX_HOST, nextZoneSerial, soaTimersOf, type ZoneTimers } from '../../lib/rpz-zone.js';
import { withSmallPageCache } from '../../db/page-cache.js';

/** Rows between two turns of the event loop: the refresh job's thread has little else to do, but any thread running this stays responsive. */
const ROWS_PER_PAUSE = 5_000;
/** Changed threats above which the index is rebuilt whole rather than row by row (~4x cheaper a row). */
const REBUILD_ABOVE = 100_000;
/** Zone versions kept for IXFR; an older serial gets the full zone. */
const HISTORY_VERSIONS = 64;

export interface IndexChange {
  /** The host list changed: host-format files and feeds are rewritten. */
  readonly hostsChanged: boolean;
  /** The zone's names changed and its serial moved. */
  readonly zoneChanged: boolean;
  readonly serial: number;
  readonly threatsRead: number;
}

/** What the allowlist changed in the zone's passthru names. */
interface PassthruStep {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly notListed: number;
}

export class ExportIndex {
  /** The index file, for the serving thread's read-only connections. */
  readonly path: string;
  readonly view: IndexView;
  readonly #mirrorPath: string;
  readonly #db: Database;

  private constructor(mirrorPath: string, path: string, fresh: boolean) {
    this.#mirrorPath = mirrorPath;
    this.path = path;
    this.#db = new Database(path, { fileMustExist: !fresh });
    this.#db.pragma('journal_mode = WAL');
    // A scratch copy: rebuilt from the mirror at every start, so a power cut costs nothing.
    this.#db.pragma('synchronous = OFF');
    this.#db.pragma('cache_size = -2048');
    if (fresh) this.#db.exec(INDEX_SCHEMA);
    this.view = new IndexView(this.#db);
  }

  /**
   * A fresh index at `path`, built from the mirror and the allowlist. What a daemon left there is
   * stale, but its zone's serial is what the secondaries hold: the new zone keeps it when its names
   * are the same (a restart that changed nothing costs no transfer), else moves past it
   * (previous-index.ts). `nowMs`: the daemon's clock, for the serial (nextZoneSerial).
   */
  static async create(mirrorPath: string, path: string, { allowlist, nowMs, timers }: { allowlist?: Allowlist | undefined; nowMs: number; timers: ZoneTimers }): Promise<ExportIndex> {
    mkdirSync(dirname(path), { recursive: true });
    const previous = setAside(path);
    const index = new ExportIndex(mirrorPath, path, true);
    try {
      await index.#rebuild(undefined, indexAllowlistOf(allowlist), nowMs);
      // The SOA's timers are part of the zone a secondary holds under a serial, as its names are.
      const soaTimers = soaTimersOf(timers);
      index.#db.prepare('UPDATE index_state SET zone_timers = ?').run(soaTimers);
      const serial = previous === undefined ? undefined : continuedSerial(index.#db, previous, nowMs, soaTimers);
      if (serial !== undefined) index.#db.prepare('UPDATE index_state SET serial = ?').run(serial);
      return index;
    } catch (error) {
      index.close();
      throw error;
    } finally {
      if (previous !== undefined) for (const file of sqliteFilesOf(previous)) rmSync(file, { force: true });
    }
  }

  /** The index a previous create() built at `path`, to be brought up to date with refresh(). */
  static open(mirrorPath: string, path: string): ExportIndex {
    return new ExportIndex(mirrorPath, path, false);
  }

  /** Brings the index up to the mirror as it is now, and to `allowlist`; never called while another refresh runs. `nowMs`: as create's. */
  async refresh(allowlist: Allowlist | undefined, nowMs: number): Promise<IndexChange> {
    const mirror = withSmallPageCache(openDatabaseReadOnly(this.#mirrorPath).sqlite);
    try {
      mirror.exec('BEGIN');
      const changeSeq = mirror.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
      const before = this.view.state();
      const allow = indexAllowlistOf(allowlist);
      const allowlistChanged = allow.version !== before.allowlist;
      if (changeSeq === before.changeSeq && !allowlistChanged) return { hostsChanged: false, zoneChanged: false, serial: before.serial, threatsRead: 0 };
      const changed = mirror.prepare('SELECT count(*) FROM threats WHERE change_seq > ?').pluck().get(before.changeSeq) as number;
      if (changed > REBUILD_ABOVE || changeSeq < before.changeSeq) return await this.#rebuild(mirror, allow, nowMs);
      return await this.#apply(mirror, { from: before.changeSeq, changeSeq, nowMs }, allow, allowlistChanged);
    } finally {
      mirror.close(); // a reader never checkpoints
    }
  }

  /**
   * Takes the serial of a zone file that now holds exactly the index's names (written by the
   * first refresh, which kept the file's serial when nothing changed, so that a restart leaves the
   * secondaries' copy current, or moved past it). The history was of other serials: dropped.
   */
  adoptSerial(serial: number): void {
    this.#db.transaction(() => {
      this.#db.prepare('UPDATE index_state SET serial = ?').run(serial);
      this.#db.exec('DELETE FROM zone_versions; DELETE FROM zone_changes');
    })();
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  /** Reads every current threat; `mirror` undefined: opens its own connection. A rebuild keeps no history. */
  async #rebuild(given: Database | undefined, allow: IndexAllowlist, nowMs: number): Promise<IndexChange> {
    const mirror = given ?? withSmallPageCache(openDatabaseReadOnly(this.#mirrorPath).sqlite);
    try {
      if (!mirror.inTransaction) mirror.exec('BEGIN');
      const changeSeq = mirror.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
      const previous = this.#db.prepare('SELECT hosts_version, serial, zone_timers FROM index_state').raw().get() as [number, number, string | null] | undefined;
      const allowed = allow.matcher === undefined ? new Set<number>() : allowedThreatIds(mirror, allow.matcher);
      const rows = mirror.prepare(`SELECT ${HOST_COLUMNS} FROM threats t WHERE ${CURRENT} ORDER BY t.id`).raw().iterate() as IterableIterator<ThreatRow>;
      const counts = new Map<string, number>();
      let read = 0;
      this.#db.exec('BEGIN');
      try {
        this.#db.exec('DELETE FROM threat_entries; DELETE FROM hosts; DELETE FROM passthru; DELETE FROM counts; DELETE FROM zone_versions; DELETE FROM zone_changes; CREATE TEMP TABLE added (host TEXT NOT NULL)');
        const insertEntry = this.#db.prepare('INSERT INTO threat_entries (id, kind, host) VALUES (?, ?, ?)');
        const insertHost = this.#db.prepare('INSERT INTO temp.added (host) VALUES (?)');
        for (const row of rows) {
          if (++read % ROWS_PER_PAUSE === 0) await yieldToEventLoop();
          const { kind, host } = indexEntryOf(row, allowed.has(row[0]));
          counts.set(kind, (counts.get(kind) ?? 0) + 1);
          insertEntry.run(row[0], kind, host);
          if (host !== null) insertHost.run(host);
        }
        this.#db.exec('INSERT INTO hosts (host, threats) SELECT host, count(*) FROM temp.added GROUP BY host; DROP TABLE temp.added');
        this.#writeCounts(counts);
        const passthru = passthruChange(this.#db, allow.matcher);
        const addPassthru = this.#db.prepare('INSERT INTO passthru (host) VALUES (?)');
        for (const host of passthru.added) addPassthru.run(host);
        const serial = nextZoneSerial(previous?.[1], nowMs);
        this.#db
          // The SOA's timers stay those the index was created with (create() sets them after a first build).
          .prepare('INSERT OR REPLACE INTO index_state (id, change_seq, hosts_version, serial, allowlist, passthru_not_listed, zone_timers) VALUES (1, ?, ?, ?, ?, ?, ?)')
          .run(changeSeq, (previous?.[0] ?? 0) + 1, serial, allow.version, passthru.notListed, previous?.[2] ?? null);
        this.#db.exec('COMMIT');
        return { hostsChanged: true, zoneChanged: true, serial, threatsRead: read };
      } catch (error) {
        if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
        throw error;
      }
    } finally {
      if (given === undefined) mirror.close();
    }
  }

  /**
   * Applies the threats whose change_seq moved past `from`, and with a new allowlist those whose
   * allowedness it changed and its passthru names; records the zone's step.
   */
  async #apply(mirror: Database, { from, changeSeq, nowMs }: { from: number; changeSeq: number; nowMs: number }, allow: IndexAllowlist, allowlistChanged: boolean): Promise<IndexChange> {
    const flipped = allowlistChanged ? threatsAllowednessChanged(mirror, this.#db, allow.matcher) : [];
    const byId = mirror.prepare(`SELECT ${THREAT_COLUMNS} FROM threats t WHERE t.id = ?`).raw();
    const fed = mirror.prepare(`SELECT ${THREAT_COLUMNS} FROM threats t WHERE t.change_seq > ? ORDER BY t.change_seq`).raw().iterate(from) as IterableIterator<ThreatRow>;
    const rows = (function* (): Generator<ThreatRow> {
      yield* fed;
      for (const id of flipped) {
        const row = byId.get(id) as ThreatRow | undefined;
        if (row !== undefined) yield row;
      }
    })();
    const statements = this.#statements();
    const counts = new Map<string, number>(
      (this.#db.prepare('SELECT kind, threats FROM counts').raw().all() as Array<[string, number]>).map(([kind, threats]) => [kind, threats]),
    );
    /** Each host touched, and whether it was listed before. */
    const touched = new Map<string, boolean>();
    const touch = (host: string): void => {
      if (!touched.has(host)) touched.set(host, statements.hostThreats.get(host) !== undefined);
    };
    let read = 0;
    this.#db.exec('BEGIN');
    try {
      for (const row of rows) {
        if (++read % ROWS_PER_PAUSE === 0) await yieldToEventLoop();
        const id = row[0];
        const old = statements.entry.get(id) as [string, string | null] | undefined;
        const entry = row[3] === 1 ? indexEntryOf(row, allowsRow(allow.matcher, row)) : undefined;
        const kind = entry?.kind;
        const host = entry?.host ?? null;
        if (old !== undefined && old[0] === kind && old[1] === host) continue;
        if (old !== undefined) {
          counts.set(old[0], (counts.get(old[0]) ?? 0) - 1);
          if (old[1] !== null) {
            touch(old[1]);
            statements.releaseHost.run(old[1]);
            statements.dropUnusedHost.run(old[1]);
          }
        }
        if (kind === undefined) statements.deleteEntry.run(id);
        else {
          counts.set(kind, (counts.get(kind) ?? 0) + 1);
          statements.putEntry.run(id, kind, host);
          if (host !== null) {
            touch(host);
            statements.holdHost.run(host);
          }
        }
      }
      const change = this.#recordStep(touched, { changeSeq, nowMs }, allowlistChanged ? this.#applyPassthru(allow) : undefined, allow.version);
      this.#writeCounts(counts);
      this.#db.exec('COMMIT');
      return { ...change, threatsRead: read };
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** The new list's passthru names in the index; what changed. */
  #applyPassthru(allow: IndexAllowlist): PassthruStep {
    const change = passthruChange(this.#db, allow.matcher);
    const add = this.#db.prepare('INSERT INTO passthru (host) VALUES (?)');
    const remove = this.#db.prepare('DELETE FROM passthru WHERE host = ?');
    for (const host of change.added) add.run(host);
    for (const host of change.removed) remove.run(host);
    return change;
  }

  /** The names that came and went, as a new hosts version and (for names that fit a zone) a new zone serial. */
  #recordStep(touched: Map<string, boolean>, { changeSeq, nowMs }: { changeSeq: number; nowMs: number }, passthru: PassthruStep | undefined, allowlist: string | null): Omit<IndexChange, 'threatsRead'> {
    const state = this.view.state();
    const listed = this.#db.prepare('SELECT 1 FROM hosts WHERE host = ?').pluck();
    let hostsChanged = passthru !== undefined && passthru.added.length + passthru.removed.length > 0;
    for (const [host, before] of touched) if (before !== (listed.get(host) !== undefined)) hostsChanged = true;
    const { removed, added } = this.#zoneRecordChanges(touched, passthru);
    const zoneChanged = removed.length + added.length > 0;
    const serial = zoneChanged ? nextZoneSerial(state.serial, nowMs) : state.serial;
    if (zoneChanged) {
      this.#db.prepare('INSERT INTO zone_versions (serial, previous) VALUES (?, ?)').run(serial, state.serial);
      const change = this.#db.prepare('INSERT INTO zone_changes (serial, added, host, passthru) VALUES (?, ?, ?, ?)');
      for (const name of removed) change.run(serial, 0, name.host, name.passthru ? 1 : 0);
      for (const name of added) change.run(serial, 1, name.host, name.passthru ? 1 : 0);
      this.#pruneHistory();
    }
    this.#db
      .prepare('UPDATE index_state SET change_seq = ?, hosts_version = ?, serial = ?, allowlist = ?, passthru_not_listed = coalesce(?, passthru_not_listed)')
      .run(changeSeq, state.hostsVersion + (hostsChanged ? 1 : 0), serial, allowlist, passthru?.notListed ?? null);
    return { hostsChanged, zoneChanged, serial };
  }

  /**
   * The zone's records that went and came at the owners this step touched: a host's record before
   * and after is its passthru if the allowlist lets it through, else its block if it is listed and
   * fits a zone (zone-names.ts: one record an owner, the passthru wins).
   */
  #zoneRecordChanges(touched: Map<string, boolean>, passthru: PassthruStep | undefined): { removed: ZoneName[]; added: ZoneName[] } {
    const listed = this.#db.prepare('SELECT 1 FROM hosts WHERE host = ?').pluck();
    const letThrough = this.#db.prepare('SELECT 1 FROM passthru WHERE host = ?').pluck();
    const passthruAdded = new Set(passthru?.added ?? []);
    const passthruRemoved = new Set(passthru?.removed ?? []);
    const owners = new Set([...touched.keys(), ...passthruAdded, ...passthruRemoved]);
    const recordOf = (host: string, blocked: boolean, through: boolean): OwnerRecord => (through ? 'passthru' : blocked && host.length <= MAX_HOST ? 'block' : undefined);
    const removed: ZoneName[] = [];
    const added: ZoneName[] = [];
    for (const host of [...owners].sort()) {
      const blockedNow = listed.get(host) !== undefined;
      const throughNow = letThrough.get(host) !== undefined;
      const throughBefore = passthruRemoved.has(host) || (throughNow && !passthruAdded.has(host));
      const before = recordOf(host, touched.get(host) ?? blockedNow, throughBefore);
      const after = recordOf(host, blockedNow, throughNow);
      if (before === after) continue;
      if (before !== undefined) removed.push({ host, passthru: before === 'passthru' });
      if (after !== undefined) added.push({ host, passthru: after === 'passthru' });
    }
    return { removed, added };
  }

  #pruneHistory(): void {
    const oldest = this.#db.prepare('SELECT serial FROM zone_versions ORDER BY rowid DESC LIMIT 1 OFFSET ?').pluck().get(HISTORY_VERSIONS - 1) as number | undefined;
    if (oldest === undefined) return;
    const rowid = this.#db.prepare('SELECT rowid FROM zone_versions WHERE serial = ?').pluck().get(oldest) as number;
    const stale = this.#db.prepare('SELECT serial FROM zone_versions WHERE rowid < ?').pluck().all(rowid) as number[];
    const dropVersion = this.#db.prepare('DELETE FROM zone_versions WHERE serial = ?');
    const dropChanges = this.#db.prepare('DELETE FROM zone_changes WHERE serial = ?');
    for (const serial of stale) {
      dropVersion.run(serial);
      dropChanges.run(serial);
    }
  }

  #writeCounts(counts: Map<string, number>): void {
    this.#db.exec('DELETE FROM counts');
    const insert = this.#db.prepare('INSERT INTO counts (kind, threats) VALUES (?, ?)');
    for (const [kind, threats] of counts) if (threats > 0) insert.run(kind, threats);
  }

  #statements(): Record<'entry' | 'deleteEntry' | 'putEntry' | 'hostThreats' | 'holdHost' | 'releaseHost' | 'dropUnusedHost', Statement> {
    return {
      entry: this.#db.prepare('SELECT kind, host FROM threat_entries WHERE id = ?').raw(),
      deleteEntry: this.#db.prepare('DELETE FROM threat_entries WHERE id = ?'),
      putEntry: this.#db.prepare('INSERT OR REPLACE INTO threat_entries (id, kind, host) VALUES (?, ?, ?)'),
      hostThreats: this.#db.prepare('SELECT threats FROM hosts WHERE host = ?').pluck(),
      holdHost: this.#db.prepare('INSERT INTO hosts (host, threats) VALUES (?, 1) ON CONFLICT (host) DO UPDATE SET threats = threats + 1'),
      releaseHost: this.#db.prepare('UPDATE hosts SET threats = threats - 1 WHERE host = ?'),
      dropUnusedHost: this.#db.prepare('DELETE FROM hosts WHERE host = ? AND threats <= 0'),
    };
  }
}
