// A verdict's scope rule (lookup/verdict.ts) against the real matching (threat-lookup.ts): for every
// documented asset type and every kind of value, a threat of that type whose content is the value
// spelled otherwise (so no exact match) is written as the page writer writes it and looked up; when
// the matcher finds it, an organization whose scope leaves that type out must answer `unknown`
// naming its scope, never `not_blocked`. Both sides read TYPES_READ_AS (url/lookup-fields.ts); this
// checks that they agree on every type, not only on the ones the constant names today.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OrganizationSync } from '../src/lookup/sync-judgement.js';
import { ThreatLookup } from '../src/lookup/threat-lookup.js';
import { vouch } from '../src/lookup/verdict.js';
import { DOCUMENTED_ASSET_TYPES } from '../src/records.js';
import { tempDir } from './support/temp.js';
import { threatRowWriter } from './support/threat-rows.js';
import { openWritableMirrorSync } from './support/writable-mirror.js';

const STAMP = '2026-03-15T12:00:00.000Z';

/** A value as asked, and the same value spelled as another writer might store it. */
const SPELLINGS: ReadonlyArray<{ readonly value: string; readonly stored: string }> = [
  { value: 'https://Evil-Kind.example/login?x=1', stored: 'http://evil-kind.example/login?x=1' },
  { value: 'evil-bare.example', stored: 'https://EVIL-BARE.example/' },
  { value: 'eip155:1:0xAbCdEf0123456789abcdef0123456789ABCDEF01', stored: 'eip155:1:0xabcdef0123456789abcdef0123456789abcdef01' },
  { value: 'Victim.Phish@Evil-Mail.example', stored: 'victim.phish@evil-mail.example' },
];

/** An organization synced and fresh whose scope is every documented type but `leftOut`. */
function scopedWithout(leftOut: string): OrganizationSync {
  return {
    organization: 'acme',
    lastRunStatus: 'succeeded',
    lastSuccessAt: STAMP,
    lastError: null,
    completeThrough: '2026-03-14',
    historyFrom: '2026-02-13',
    retiredAt: null,
    assetTypes: [...DOCUMENTED_ASSET_TYPES].filter((type) => type !== leftOut).sort(),
    widening: [],
    historyWalkTarget: null,
    state: 'fresh',
    stale: false,
    problems: [],
  };
}

describe('the verdict knows every type whose threats the matcher finds for a value', () => {
  it('answers unknown, naming the scope, whenever the scope leaves out the type of a threat that matches', () => {
    const dir = tempDir('verdict-types-');
    const types = [...DOCUMENTED_ASSET_TYPES];
    const opened = openWritableMirrorSync(join(dir, 'mirror.db'));
    const found: string[] = [];
    try {
      const insert = threatRowWriter(opened.sqlite);
      const link = opened.sqlite.prepare('INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES (?, ?, ?)');
      const clear = opened.sqlite.prepare('DELETE FROM organization_threats');
      const clearThreats = opened.sqlite.prepare('DELETE FROM threats');
      const lookup = new ThreatLookup(opened.sqlite);
      let id = 0;
      for (const { value, stored } of SPELLINGS) {
        for (const type of types) {
          id += 1;
          clear.run();
          clearThreats.run();
          insert({ id, content: stored, type, blockedAt: STAMP, stamp: STAMP, changeSeq: id });
          link.run('acme', id, STAMP);
          const result = lookup.lookup(value);
          if (!result.blocked) continue;
          found.push(`${type} ${value}`);
          // The same answer without that threat in the mirror: what a scope leaving out `type` holds.
          const missed = { ...result, blocked: false, matches: [] };
          const [vouched] = vouch([missed], [scopedWithout(type)]).results;
          expect(vouched?.verdict, `${type} threat ${JSON.stringify(stored)} matches ${JSON.stringify(value)}`).toBe('unknown');
          expect(vouched?.reason).toContain('THREAT_MIRROR_ASSET_TYPES');
          // And a scope that keeps it answers from the mirror.
          const [kept] = vouch([missed], [{ ...scopedWithout('none'), assetTypes: null }]).results;
          expect(kept?.verdict).toBe('not_blocked');
        }
      }
    } finally {
      opened.close();
    }
    // What the matcher finds today, so that the loop cannot pass by finding nothing.
    expect(found.sort()).toEqual(
      [
        'PAGE https://Evil-Kind.example/login?x=1',
        'URL https://Evil-Kind.example/login?x=1',
        'PAGE evil-bare.example',
        'URL evil-bare.example',
        'ADDRESS eip155:1:0xAbCdEf0123456789abcdef0123456789ABCDEF01',
        // Not URL nor PAGE: the one URL reader never reads an e-mail as a bare host (web-url.ts).
        'EMAIL Victim.Phish@Evil-Mail.example',
      ].sort(),
    );
  });
});
