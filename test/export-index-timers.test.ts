// The SOA timers an export index records (index_state.zone_timers) outlive a refresh that rebuilds
// it (the mirror's change_seq behind the index's: a resync), so a restart that changes nothing
// after one keeps the zone's serial: the secondaries transfer nothing (previous-index.ts).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sqliteFilesOf } from '../src/db/database-files.js';
import { ExportIndex } from '../src/export/index/export-index.js';
import { zoneTimersFor } from '../src/lib/rpz-zone.js';
import { scalar } from './support/mirror-db.js';
import { tempDir } from './support/temp.js';
import { type ThreatRowInput, writeThreatRows } from './support/threat-rows.js';

const STAMP = '2026-03-15T12:00:00.000Z';

/** A mirror of one organization's URL threats on `hosts`, change_seq from `firstSeq` on. */
/** One URL threat a host, change_seq counting from `firstSeq`. */
const urlRows = (hosts: readonly string[], firstSeq: number): ThreatRowInput[] => hosts.map((host, at) => ({ id: at + 1, content: `https://${host}/`, type: 'URL', blockedAt: STAMP, stamp: STAMP, changeSeq: firstSeq + at }));

describe("an export index's SOA timers", () => {
  it('survive a refresh that rebuilds the index, so a restart that changes nothing keeps the serial; other timers move it', async () => {
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    const indexPath = join(dir, 'exports', 'index.db');
    const timers = zoneTimersFor(3600);
    writeThreatRows(dbPath, urlRows(['a-one.com', 'a-two.com', 'a-three.com'], 100));
    const index = await ExportIndex.create(dbPath, indexPath, { nowMs: Date.parse(STAMP), timers });
    // A resync: the mirror starts over, its change_seq behind the index's, and the refresh rebuilds.
    for (const file of sqliteFilesOf(dbPath)) rmSync(file, { force: true });
    writeThreatRows(dbPath, urlRows(['b-one.com', 'b-two.com'], 1));
    await index.refresh(undefined, Date.parse(STAMP) + 60_000);
    const rebuilt = index.view.state().serial;
    index.close();
    expect(scalar(indexPath, 'SELECT zone_timers FROM index_state')).toBe('3600 720 864000 300');
    const restarted = await ExportIndex.create(dbPath, indexPath, { nowMs: Date.parse(STAMP) + 120_000, timers });
    expect(restarted.view.state().serial).toBe(rebuilt);
    restarted.close();
    const daily = await ExportIndex.create(dbPath, indexPath, { nowMs: Date.parse(STAMP) + 180_000, timers: zoneTimersFor(86_400) });
    expect(daily.view.state().serial).toBeGreaterThan(rebuilt);
    daily.close();
  });
});
