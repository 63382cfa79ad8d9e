// Issue 31: the daemon's export index follows the allowlist step by step (src/export/index-allowlist.ts):
// after each new version, and after changes from the mirror's change feed under a list, it holds
// exactly what a fresh build with that list holds (hosts, passthru names, counts), and the zone's
// history replays from any version to the current one (what an IXFR sends).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Allowlist } from '../src/allowlist/allowlist-entries.js';
import { parseAllowlist } from '../src/allowlist/allowlist-entries.js';
import { openWritableMirrorSync } from './support/writable-mirror.js';
import { ExportIndex } from '../src/export/index/export-index.js';
import { zoneTimersFor } from '../src/lib/rpz-zone.js';
import type { IndexView } from '../src/export/index/index-view.js';
import { generateThreats } from '../src/standin/index.js';
import { deriveLookupFields } from '../src/url/lookup-fields.js';
import { tempDir } from './support/temp.js';
import { writeThreatRows } from './support/threat-rows.js';

const STAMP = '2026-03-15T12:00:00.000Z';

function listOf(lines: string[]): Allowlist {
  return { file: 'allow.txt', version: lines.join('\n'), entries: parseAllowlist('allow.txt', lines) };
}

/** A mirror of generated threats (URLs on real TLDs among them), as the page writer would write it; `more` adds threats later (a change feed). */
function mirror(dbPath: string): { add(contents: Array<[string, string]>): void; remove(id: number): void; hosts: string[] } {
  const threats = generateThreats({ seed: 31, organizations: ['acme'], count: 3_000, fromDay: '2026-03-10', toDay: '2026-03-15', hostile: false });
  let seq = 0;
  let nextId = 50_000_000;
  const write = (rows: Array<{ id: number; content: string; type: string }>): void => writeThreatRows(dbPath, rows.map((row) => ({ id: row.id, content: row.content, type: row.type, blockedAt: STAMP, stamp: STAMP, changeSeq: ++seq })));
  write(threats);
  const hosts = [...new Set(threats.filter((threat) => threat.type === 'URL').map((threat) => deriveLookupFields('URL', threat.content).urlExpression?.split('/')[0] ?? ''))].filter((host) => /\.(com|net|org|io)$/.test(host));
  return {
    hosts,
    add: (contents) => write(contents.map(([content, type]) => ({ id: ++nextId, content, type }))),
    remove: (id) => {
      const opened = openWritableMirrorSync(dbPath);
      try {
        opened.sqlite.prepare('UPDATE organization_threats SET removed_at = ? WHERE threat_id = ?').run(STAMP, id);
        opened.sqlite.prepare('UPDATE threats SET change_seq = ? WHERE id = ?').run(++seq, id);
      } finally {
        opened.close();
      }
    },
  };
}

/** What the index holds, apart from serials and versions. */
function contents(view: IndexView): unknown {
  const { hosts: _hosts, ...selection } = view.selection();
  return { selection, hosts: [...view.sorted()], passthru: view.passthruHosts() };
}

/** The zone's names as a set of `host` and `host passthru`. */
function names(view: IndexView): Set<string> {
  return new Set([...view.zoneNames().blocked, ...view.passthruHosts().map((host) => `${host} passthru`)]);
}

describe('the export index under an allowlist', () => {
  it('after each new list and each change from the mirror, holds what a fresh build holds; the zone history replays', async () => {
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    const data = mirror(dbPath);
    expect(data.hosts.length).toBeGreaterThan(20);
    const [a, b, c, d] = data.hosts;
    const versions: Allowlist[] = [
      listOf([`${a} # first`, `https://${b}/some/path`]),
      listOf([`${b}`, `${c}`, 'https://pass-only.com/ # allowed, nothing blocks it']),
      listOf([`https://${c}/`, `${d}`, 'eip155:1:0xabc0000000000000000000000000000000000001', 'who@allowed-mail.com']),
      listOf([]),
    ];
    const index = await ExportIndex.create(dbPath, join(dir, 'index.db'), { nowMs: Date.parse(STAMP), timers: zoneTimersFor(3600) });
    const history: Array<{ serial: number; names: Set<string> }> = [{ serial: index.view.state().serial, names: names(index.view) }];
    try {
      for (const [step, list] of versions.entries()) {
        const change = await index.refresh(list, Date.parse(STAMP));
        expect(change.zoneChanged, `step ${step}`).toBe(true);
        // New threats under the list: an allowed host's subdomain, an allowed address and e-mail, a blocked host; one removed.
        data.add([[`https://sub.${c}/`, 'URL'], ['eip155:1:0xABC0000000000000000000000000000000000001', 'ADDRESS'], ['Who@Allowed-Mail.com', 'EMAIL'], [`https://step${step}-blocked.com/`, 'URL']]);
        data.remove(1_000 + step);
        await index.refresh(list, Date.parse(STAMP));
        const fresh = await ExportIndex.create(dbPath, join(dir, `fresh-${step}.db`), { allowlist: list, nowMs: Date.parse(STAMP), timers: zoneTimersFor(3600) });
        try {
          expect(contents(index.view), `step ${step}`).toEqual(contents(fresh.view));
        } finally {
          fresh.close();
        }
        if (step < 3) expect(index.view.selection().allowlist?.threats, `step ${step}`).toBeGreaterThan(0);
        history.push({ serial: index.view.state().serial, names: names(index.view) });
      }
      // From every version of the zone, its steps lead to the current names.
      for (const { serial, names: from } of history.slice(0, -1)) {
        const replayed = new Set(from);
        for (const zoneStep of index.view.zoneStepsSince(serial) ?? []) {
          for (const name of zoneStep.removed) replayed.delete(name.passthru ? `${name.host} passthru` : name.host);
          for (const name of zoneStep.added) replayed.add(name.passthru ? `${name.host} passthru` : name.host);
        }
        expect([...replayed].sort(), `from serial ${serial}`).toEqual([...names(index.view)].sort());
      }
      const serials = history.map((version) => version.serial);
      expect(serials).toEqual([...serials].sort((x, y) => x - y));
      expect(new Set(serials).size).toBe(serials.length);
    } finally {
      index.close();
    }
  }, 60_000);
});
