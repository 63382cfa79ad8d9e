// The stand-in's `query` filter answers from its content index exactly as a scan would: every
// content that holds the query (any case), cut anywhere, and nothing else.
import { describe, expect, it } from 'vitest';
import { generateThreats, seededRandom } from '../../src/standin/index.js';
import { compareBy, parseThreatQuery } from '../../src/standin/threat-query.js';
import { ThreatStore } from '../../src/standin/threat-store.js';

describe('the stand-in query filter', () => {
  it('equals a scan of every content, for whole contents and pieces cut anywhere', () => {
    const threats = generateThreats({ seed: 5, organizations: ['acme', 'globex'], count: 12_000, fromDay: '2026-01-01', toDay: '2026-03-01' });
    const store = new ThreatStore({ organizationKeys: { k: 'acme' }, userKeys: {} }, threats);
    const random = seededRandom(9);
    for (let attempt = 0; attempt < 300; attempt += 1) {
      const content = (threats[Math.floor(random() * threats.length)] as (typeof threats)[number]).content;
      const from = Math.floor(random() * content.length);
      const piece = attempt % 3 === 0 ? content : content.slice(from, from + 1 + Math.floor(random() * 40));
      const text = attempt % 5 === 0 ? piece.toUpperCase() : piece;
      const query = parseThreatQuery({ startDate: '1970-01-01', endDate: '2026-03-01', query: text }, new Date('2026-03-01T00:00:00Z'));
      const scanned = threats.filter((threat) => threat.organization === 'acme' && threat.content.toLowerCase().includes(text.toLowerCase())).sort(compareBy(query.sorting));
      expect(store.list(['acme'], query).map((threat) => threat.id), JSON.stringify(text)).toEqual(scanned.map((threat) => threat.id));
    }
  });
});
