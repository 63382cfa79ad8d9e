// Issue 31: SQL readers see the allowlist (the table `allowlist`) and `enforced_threats`, the view of
// current_threats without what it allows. The view says in SQL what src/allowlist/allow-matcher.ts
// says in TypeScript, and so does allowed-threats.ts (what exports and the export index use): held
// to the same answer over generated threats (hostile ones included) and entries of every kind,
// parents and subdomains, paths with and without queries, chains.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Allowlist, parseAllowlist } from '../src/allowlist/allowlist-entries.js';
import { AllowMatcher } from '../src/allowlist/allow-matcher.js';
import { AllowlistRows } from '../src/db/sql/allowlist-rows.js';
import { MirrorSettings } from '../src/db/sql/settings.js';
import { allowedThreatIds } from '../src/export/allowed-threats.js';
import { openWritableMirrorSync } from './support/writable-mirror.js';
import type { Database } from '../src/db/sqlite.js';
import { generateThreats } from '../src/standin/index.js';
import { tempDir } from './support/temp.js';
import { threatRowWriter } from './support/threat-rows.js';

const STAMP = '2026-03-15T12:00:00.000Z';

interface Row {
  id: number;
  content: string;
  url_expression: string | null;
  address: string | null;
  address_namespace: string | null;
  address_chain: string | null;
  email: string | null;
}

function writeThreats(sqlite: Database): void {
  const generated = generateThreats({ seed: 3131, organizations: ['acme', 'globex'], count: 4_000, fromDay: '2026-03-01', toDay: '2026-03-15', hostile: true });
  const extra = [
    'https://docs.portal-a.com/', 'https://a.b.c.d.e.f.g.docs.portal-a.com/deep', 'https://portal-a.com/', 'https://notdocs.portal-a.com/',
    'https://shared-b.com/forms/abc', 'https://shared-b.com/forms/abc?x=1', 'https://shared-b.com/forms/abc/step2', 'https://shared-b.com/forms/abcdef',
    'https://shared-b.com/forms/', 'https://shared-b.com/p?id=1', 'https://shared-b.com/p?id=2', 'https://shared-b.com/p', 'https://shared-b.com/p?',
    'https://dir-c.net/a/', 'https://dir-c.net/a', 'https://dir-c.net/a/b', 'http://192.0.2.7/x', 'http://x.192.0.2.7/', 'https://h_d.example.org/',
  ];
  const threats = [
    ...generated,
    ...extra.map((content, index) => ({ id: 90_000_000 + index, content, type: 'URL', organization: 'acme' })),
    { id: 90_001_000, content: 'eip155:1:0xAbC0000000000000000000000000000000000001', type: 'ADDRESS', organization: 'acme' },
    { id: 90_001_001, content: 'eip155:137:0xabc0000000000000000000000000000000000001', type: 'ADDRESS', organization: 'acme' },
    { id: 90_001_002, content: 'eip155:1:0xdef0000000000000000000000000000000000002', type: 'ADDRESS', organization: 'acme' },
    { id: 90_001_003, content: 'eip155:137:0xdef0000000000000000000000000000000000002', type: 'ADDRESS', organization: 'acme' },
    { id: 90_001_004, content: 'Who@Mail-E.com', type: 'EMAIL', organization: 'acme' },
    { id: 90_001_005, content: 'free text threat', type: 'PLATFORM_02', organization: 'acme' },
  ];
  const insert = threatRowWriter(sqlite);
  const link = sqlite.prepare('INSERT INTO organization_threats (organization, threat_id, first_seen_at, removed_at) VALUES (?, ?, ?, ?)');
  sqlite.transaction(() => {
    for (const [index, threat] of threats.entries()) {
      insert({ id: threat.id, content: threat.content, type: threat.type, blockedAt: STAMP, stamp: STAMP, changeSeq: index + 1 });
      // Some generated threats removed (the view never shows them); the hand-written ones all current.
      link.run(threat.organization, threat.id, STAMP, index < generated.length && index % 11 === 5 ? STAMP : null);
    }
  })();
}

/** Entries of every kind: some written here, some taken from the generated threats (hosts, their parents, exact contents). */
function entriesFor(sqlite: Database): string[] {
  const written = [
    'docs.portal-a.com # a host and its subdomains',
    'https://shared-b.com/forms/abc # a path and below',
    'https://shared-b.com/p?id=1',
    'https://dir-c.net/a/',
    '192.0.2.7',
    'h_d.example.org',
    '0xABC0000000000000000000000000000000000001',
    'eip155:137:0xdef0000000000000000000000000000000000002',
    'who@mail-e.com',
    'free text threat',
  ];
  const rows = sqlite.prepare("SELECT content, url_expression FROM threats WHERE type IN ('URL', 'PAGE') AND url_expression IS NOT NULL ORDER BY id").all() as Array<{ content: string; url_expression: string }>;
  const taken = rows.filter((_, index) => index % 97 === 0).flatMap(({ content, url_expression: expression }) => {
    const host = expression.slice(0, expression.indexOf('/'));
    const parent = host.split('.').slice(1).join('.');
    return [host, parent, content, `https://${expression}`];
  });
  const lines = [...written, ...taken].filter((line) => {
    try {
      parseAllowlist('allow.txt', [line]);
      return true;
    } catch {
      return false; // a public suffix, say: refused by the file too
    }
  });
  return lines;
}

describe('enforced_threats', () => {
  it('is current_threats without what the allowlist allows, exactly as the matcher decides', () => {
    const opened = openWritableMirrorSync(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    try {
      writeThreats(sqlite);
      const lines = entriesFor(sqlite);
      expect(lines.length).toBeGreaterThan(50);
      const list: Allowlist = { file: '/etc/tm/allow.txt', version: 'v1', entries: parseAllowlist('/etc/tm/allow.txt', lines) };
      const rows = new AllowlistRows(sqlite, new MirrorSettings(sqlite));
      expect(sqlite.transaction(() => rows.mirror({ ...list, appliedAt: STAMP }, STAMP))()).toBe(true);
      // The same version again writes nothing.
      expect(sqlite.transaction(() => rows.mirror({ ...list, appliedAt: STAMP }, STAMP))()).toBe(false);
      expect(sqlite.prepare('SELECT count(*) FROM allowlist').pluck().get()).toBe(list.entries.length);

      const matcher = new AllowMatcher(list.entries);
      const current = sqlite.prepare(
        `SELECT DISTINCT t.id, t.content, t.url_expression, t.address, t.address_namespace, t.address_chain, t.email
           FROM threats t JOIN organization_threats o ON o.threat_id = t.id WHERE o.removed_at IS NULL ORDER BY t.id`,
      ).all() as Row[];
      const allowedByMatcher = current.filter((row) => matcher.threat({ content: row.content, urlExpression: row.url_expression, address: row.address, addressNamespace: row.address_namespace, addressChain: row.address_chain, email: row.email }) !== undefined);
      const enforced = new Set(sqlite.prepare('SELECT DISTINCT id FROM enforced_threats').pluck().all() as number[]);
      const allowedBySql = current.filter((row) => !enforced.has(row.id));
      expect(allowedBySql.map((row) => row.id)).toEqual(allowedByMatcher.map((row) => row.id));
      // And what exports and the export index use: the same threats, found through the indexes.
      const found = allowedThreatIds(sqlite, matcher);
      expect(current.filter((row) => found.has(row.id)).map((row) => row.id)).toEqual(allowedByMatcher.map((row) => row.id));
      expect(allowedByMatcher.length).toBeGreaterThan(60);
      // The hand-written cases, by content.
      const allowedContents = new Set(allowedBySql.map((row) => row.content));
      for (const content of ['https://a.b.c.d.e.f.g.docs.portal-a.com/deep', 'https://shared-b.com/forms/abc?x=1', 'https://shared-b.com/forms/abc/step2', 'https://shared-b.com/p?id=1', 'https://dir-c.net/a/b', 'http://192.0.2.7/x', 'Who@Mail-E.com', 'free text threat', 'eip155:137:0xdef0000000000000000000000000000000000002', 'eip155:137:0xabc0000000000000000000000000000000000001']) {
        expect(allowedContents.has(content), content).toBe(true);
      }
      // x.192.0.2.7 is no host to the browser (a name ending in a number must be an IPv4 address): exact content only.
      for (const content of ['http://x.192.0.2.7/', 'https://portal-a.com/', 'https://notdocs.portal-a.com/', 'https://shared-b.com/forms/abcdef', 'https://shared-b.com/forms/', 'https://shared-b.com/p?id=2', 'https://shared-b.com/p', 'https://shared-b.com/p?', 'https://dir-c.net/a', 'eip155:1:0xdef0000000000000000000000000000000000002']) {
        expect(allowedContents.has(content), content).toBe(false);
      }
      // Its columns are current_threats'; with no allowlist it is current_threats.
      expect(Object.keys(sqlite.prepare('SELECT * FROM enforced_threats LIMIT 1').get() as object)).toEqual(Object.keys(sqlite.prepare('SELECT * FROM current_threats LIMIT 1').get() as object));
      expect(sqlite.transaction(() => rows.mirror(null, STAMP))()).toBe(true);
      expect(sqlite.prepare('SELECT count(*) FROM (SELECT * FROM current_threats EXCEPT SELECT * FROM enforced_threats)').pluck().get()).toBe(0);
      expect(sqlite.prepare("SELECT count(*) FROM mirror_settings WHERE key LIKE 'allowlist%'").pluck().get()).toBe(0);
    } finally {
      opened.close();
    }
  });
});
