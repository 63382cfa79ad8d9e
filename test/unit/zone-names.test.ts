// The rule every zone served is held to (src/export/zone-names.ts): one record per owner, the
// allowlist's passthru winning over a block of the same name, and an IXFR whose steps would break
// it replaced by the full zone. The names that reach it are consistent by construction (one reader,
// derived once); these cases give it a block and a passthru at one name anyway, as a list and a
// mirror that disagreed used to, and named-checkzone judges the file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noneLeftOut } from '../../src/export/host-selection.js';
import { HostSet } from '../../src/export/host-set.js';
import type { ZoneStep } from '../../src/export/index/schema.js';
import { renderRpz } from '../../src/export/formats/rpz.js';
import { type OwnerRecord, stepsKeepOneRecordPerOwner, zoneNamesOf } from '../../src/export/formats/zone-names.js';
import { namedCheckzone } from '../support/dns-tools.js';
import { skipWithout } from '../support/judges.js';
import { tempDir } from '../support/temp.js';

function hostSet(hosts: readonly string[]): HostSet {
  const set = new HostSet();
  for (const host of hosts) set.add(host);
  return set;
}

describe('one record per owner', () => {
  it('a passthru name wins over a block of the same name: the block is left out and counted', () => {
    const hosts = hostSet(['a-blocked.com', 'customer-portal.com', 'z-blocked.com']);
    try {
      const names = zoneNamesOf(hosts, ['customer-portal.com', 'only-allowed.com']);
      expect([...names.blocked]).toEqual(['a-blocked.com', 'z-blocked.com']);
      expect(names.passthru).toEqual(['customer-portal.com', 'only-allowed.com']);
      expect(names.shadowed).toBe(1);
      expect([...zoneNamesOf(hosts, []).blocked]).toEqual(['a-blocked.com', 'customer-portal.com', 'z-blocked.com']);
    } finally {
      hosts.close();
    }
  });

  it.skipIf(skipWithout(['named-checkzone']))('an RPZ rendered from such a selection is one named-checkzone accepts, and says what it left out', () => {
    const hosts = hostSet(['customer-portal.com', 'still-evil.com']);
    try {
      const selection = { hosts, hostCount: 2, hostThreats: 2, leftOut: noneLeftOut(), otherTypes: 0, allowlist: { threats: 0, passthru: ['customer-portal.com'], notListed: 0 } };
      const text = [...renderRpz({ selection, organization: undefined }, 7)].join('');
      expect(text).toContain('; 1 blocked hosts left out where the allowlist lets the same name through (one record a name)');
      expect(text).not.toMatch(/^customer-portal\.com CNAME \.$/m);
      const file = join(tempDir(), 'threats.rpz');
      writeFileSync(file, text);
      const verdict = namedCheckzone('rpz.threat-mirror', file);
      expect(verdict.status, verdict.output).toBe(0);
    } finally {
      hosts.close();
    }
  });

  it('an IXFR is checked step by step against the version it ends at; one that would put two records at an owner is refused', () => {
    const now = (records: Record<string, OwnerRecord>) => (host: string): OwnerRecord => records[host];
    const block = (host: string) => ({ host, passthru: false });
    const passthru = (host: string) => ({ host, passthru: true });
    const steps: ZoneStep[] = [
      { previous: 1, serial: 2, removed: [], added: [block('a.com'), block('b.com')] },
      { previous: 2, serial: 3, removed: [block('b.com')], added: [passthru('b.com')] },
    ];
    expect(stepsKeepOneRecordPerOwner(steps, now({ 'a.com': 'block', 'b.com': 'passthru' }))).toBe(true);
    // The passthru added without the block removed: two CNAMEs at b.com.
    const conflicting: ZoneStep[] = [steps[0] as ZoneStep, { previous: 2, serial: 3, removed: [], added: [passthru('b.com')] }];
    expect(stepsKeepOneRecordPerOwner(conflicting, now({ 'a.com': 'block', 'b.com': 'passthru' }))).toBe(false);
    // A name added twice in one step, and steps that do not end at the version served.
    expect(stepsKeepOneRecordPerOwner([{ previous: 1, serial: 2, removed: [], added: [block('a.com'), passthru('a.com')] }], now({ 'a.com': 'passthru' }))).toBe(false);
    expect(stepsKeepOneRecordPerOwner(steps, now({ 'a.com': 'block', 'b.com': 'block' }))).toBe(false);
  });
});
