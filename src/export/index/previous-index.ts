// The export index a daemon left (THREAT_MIRROR_DB.exports/index.db: it stays when the daemon
// stops, and a killed one leaves it too): stale as an index, since the mirror may have moved on,
// but its zone's serial is what the secondaries hold. ExportIndex.create sets it aside, builds
// anew, and continues that serial here; then the copy set aside is removed.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { sqliteFilesOf } from '../../db/database-files.js';
import type { Database } from '../../db/sqlite.js';
import { nextZoneSerial } from '../../lib/rpz-zone.js';

/** Moves the index at `path` aside, with its WAL (which may hold its last commits); where it went, or undefined when there was none. */
export function setAside(path: string): string | undefined {
  const aside = `${path}.previous`;
  const asideFiles = sqliteFilesOf(aside);
  for (const file of asideFiles) rmSync(file, { force: true });
  const found = existsSync(path);
  sqliteFilesOf(path).forEach((file, at) => {
    if (found && existsSync(file)) renameSync(file, asideFiles[at] as string);
    else rmSync(file, { force: true });
  });
  return found ? aside : undefined;
}

/**
 * The serial the index just built on `db` takes after the one set aside at `previous`: the same
 * when its zone had the same names (its hosts and passthru names: the zone is made of those) and
 * the same SOA timers (`soaTimers`: they follow THREAT_MIRROR_SCHEDULE), so a restart that changed
 * nothing costs the secondaries no transfer; else the next after it (a secondary keeps the timers
 * of the serial it holds). Undefined
 * when the index set aside cannot be read (a power cut: it is written without syncing) or never
 * finished its first build: the new one's serial, by the clock, stands.
 */
export function continuedSerial(db: Database, previous: string, nowMs: number, soaTimers: string): number | undefined {
  let before: number | undefined;
  let same = false;
  let attached = false;
  try {
    db.prepare('ATTACH DATABASE ? AS previous').run(previous);
    attached = true;
    // The index's small page cache, not the driver's 16 MB: 500,000 hosts compared then cost
    // 150 ms and no resident memory (27 MB with the default caches, measured).
    db.pragma('previous.cache_size = -2048');
    before = db.prepare('SELECT serial FROM previous.index_state').pluck().get() as number | undefined;
    const differ = (table: string): boolean =>
      db.prepare(`SELECT EXISTS (SELECT host FROM main.${table} EXCEPT SELECT host FROM previous.${table}) OR EXISTS (SELECT host FROM previous.${table} EXCEPT SELECT host FROM main.${table})`).pluck().get() === 1;
    // An index of a version without the column fails here: the serial then moves on, once.
    const timersBefore = db.prepare('SELECT zone_timers FROM previous.index_state').pluck().get() as string | null | undefined;
    same = before !== undefined && timersBefore === soaTimers && !differ('hosts') && !differ('passthru');
  } catch {
    // Unreadable, or of another version's schema: only a serial read before the failure counts.
  } finally {
    if (attached) db.exec('DETACH DATABASE previous');
  }
  if (before === undefined) return undefined;
  return same ? before : nextZoneSerial(before, nowMs);
}
