// The export benchmark's mirror: N current threats written straight into a migrated file (this
// measures exports, not the sync), and later changes to it the way the page writer makes them
// (new rows with change_seq above every earlier one). Every host is under a delegated TLD, so
// every host format keeps it (src/url/blockable-host.ts).
//
// The mix: 40% URLs that block a whole host, each its own host (the worst case for the host lists:
// ~400,000 names at 1M), a tenth of those IDN homographs; 30% path-level URLs on 50 shared hosts;
// 15% addresses; 15% e-mails. A third of the threats belong to 'globex', the rest to 'acme'.
import { openWritableMirrorSync } from '../support/writable-mirror.js';
import type { Database } from '../../src/db/sqlite.js';
import { threatRowWriter } from '../support/threat-rows.js';

const TLDS = ['com', 'net', 'xyz', 'top', 'online', 'app'];
const STAMP = '2026-11-01T00:00:00.000Z';

/** The type and content of the threat with this index (0-based); ids are index + 1. */
export function benchThreat(index: number, salt = ''): [type: string, content: string] {
  const roll = index % 20;
  const tld = TLDS[index % TLDS.length] as string;
  if (roll === 0) return ['URL', `https://аррlе-${salt}${index.toString(36)}.brand-${index % 97}.${tld}/`];
  if (roll < 8) return ['URL', `https://login-${salt}${index.toString(36)}.brand-${index % 97}.${tld}/`];
  if (roll < 14) return ['URL', `https://shared-host-${index % 50}.${tld}/forms/${salt}${index.toString(36)}?id=${index}`];
  if (roll < 17) return ['ADDRESS', `eip155:1:0x${index.toString(16).padStart(40, '0')}`];
  return ['EMAIL', `support${salt}${index}@brand-${index % 97}.${tld}`];
}

/** Inserts threats [from, to) with change_seq starting after `seqBase`, in one transaction per 10,000. */
export function insertThreats(sqlite: Database, from: number, to: number, { seqBase = 0, salt = '', stamp = STAMP } = {}): void {
  const insertThreat = threatRowWriter(sqlite);
  const insertLink = sqlite.prepare('INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES (?, ?, ?)');
  const batch = sqlite.transaction((start: number, end: number) => {
    for (let index = start; index < end; index += 1) {
      const [type, content] = benchThreat(index, salt);
      insertThreat({ id: index + 1, content, type, blockedAt: stamp, stamp, changeSeq: seqBase + index - from + 1 });
      insertLink.run(index % 3 === 0 ? 'globex' : 'acme', index + 1, stamp);
    }
  });
  for (let start = from; start < to; start += 10_000) batch(start, Math.min(to, start + 10_000));
}

/** A fresh mirror of `count` threats at `path`. */
export function writeBenchMirror(path: string, count: number): void {
  const opened = openWritableMirrorSync(path);
  try {
    insertThreats(opened.sqlite, 0, count);
  } finally {
    opened.close();
  }
}

/**
 * A change as a sync run makes it: `added` new host-blocking threats and `removed` existing ones
 * taken off (removed_at set, change_seq moved), each with a change_seq above every earlier one:
 * `added` hosts enter the host lists and `removed` leave them.
 */
export function changeBenchMirror(path: string, { added, removed, firstNewIndex, salt }: { added: number; removed: number; firstNewIndex: number; salt: string }): void {
  const opened = openWritableMirrorSync(path);
  const { sqlite } = opened;
  try {
    const top = sqlite.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
    // Whole-host URLs only: indexes whose roll is 1-7.
    const indexes: number[] = [];
    for (let index = firstNewIndex; indexes.length < added; index += 1) if (index % 20 >= 1 && index % 20 < 8) indexes.push(index);
    sqlite.transaction(() => {
      let seq = top;
      for (const index of indexes) insertThreats(sqlite, index, index + 1, { seqBase: seq++, salt, stamp: new Date().toISOString() });
      const victims = sqlite.prepare("SELECT id FROM threats WHERE content LIKE 'https://login-%' AND id <= ? ORDER BY id LIMIT ?").pluck().all(firstNewIndex, removed) as number[];
      const unlink = sqlite.prepare('UPDATE organization_threats SET removed_at = ? WHERE threat_id = ?');
      const move = sqlite.prepare('UPDATE threats SET change_seq = ? WHERE id = ?');
      for (const id of victims) {
        unlink.run(new Date().toISOString(), id);
        move.run(++seq, id);
      }
    })();
  } finally {
    opened.close();
  }
}
