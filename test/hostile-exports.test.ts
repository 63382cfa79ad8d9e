// What crafted contents can do to the block lists built from them, judged by a real resolver:
// issue 32 item 1 (RPZ trigger names and names outside a delegated top-level domain) and item 2
// (a URL whose host a browser reads differently from the canonicalizer). The built CLI mirrors
// the stand-in, exports, and Unbound loads the RPZ.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StandinThreat } from '../src/standin/index.js';
import { LOOKUP_RULES_VERSION } from '../src/url/lookup-rules.js';
import { runCli } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { type Authority, type PolicyResolver, startAuthority, startPolicyResolver } from './support/policy-zones.js';
import { scalar, withWritableDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'hostile-exports-key-9a2b';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2' });

let nextId = 100;
const threat = (content: string, type = 'URL'): StandinThreat => ({ id: (nextId += 1), content, type, blockedAt: `${TODAY}T10:00:00.000Z`, organization: 'acme' });

async function mirrorOf(threats: StandinThreat[]): Promise<string> {
  const service = await serveThreats(KEY, NOW, threats);
  const dbPath = tempDbPath();
  const synced = await runCli(['--once'], env(service, dbPath));
  expect(synced.code, synced.stderr).toBe(0);
  return dbPath;
}

async function exported(dbPath: string, format: string): Promise<{ text: string; summary: string }> {
  const result = await runCli(['export', '--format', format], { THREAT_MIRROR_DB: dbPath });
  expect(result.code, result.stderr).toBe(0);
  return { text: result.stdout, summary: result.stderr };
}

const entries = (text: string, comment: string): string[] => text.split('\n').filter((line) => line !== '' && !line.startsWith(comment));

let resolver: PolicyResolver | undefined;
let authority: Authority | undefined;
afterEach(async () => {
  await resolver?.stop();
  await authority?.close();
  resolver = undefined;
  authority = undefined;
});

/**
 * Unbound with the RPZ file, every name of `names` served by an authority of the test's own: a
 * blocked name is NXDOMAIN without RA (the policy's signal), any other resolves to 192.0.2.10.
 */
async function resolverOver(zoneFile: string, names: readonly string[]): Promise<PolicyResolver> {
  authority = await startAuthority(Object.fromEntries(names.map((name) => [name, '192.0.2.10'])));
  resolver = await startPolicyResolver(join(tempDir(), 'unbound'), [{ name: 'rpz.threat-mirror', file: zoneFile }], { names, port: authority.port });
  return resolver;
}

describe('exports take only names a resolver reads as a plain domain (issue 32 item 1)', () => {
  /** Trigger-shaped contents: each an RPZ trigger on addresses or name servers if written as an owner name. */
  const TRIGGERS = [threat('1.0.0.0.0.rpz-client-ip'), threat('http://8.0.0.0.10.rpz-ip/'), threat('ns.example.rpz-nsdname', 'PAGE'), threat('https://32.1.0.0.127.rpz-nsip/')];

  it('leaves RPZ trigger names and undelegated names out of every host format, counted in header and summary', async () => {
    const dbPath = await mirrorOf([...TRIGGERS, threat('https://phish-canary.com/'), threat('https://lab-only.example/'), threat('https://printer.local/')]);
    for (const [format, comment] of [['domains', '#'], ['hosts', '#'], ['adguard', '!'], ['rpz', ';']] as const) {
      const { text, summary } = await exported(dbPath, format);
      const listed = entries(text, comment).filter((line) => format !== 'rpz' || line.includes(' CNAME ')).join('\n');
      expect(listed, format).not.toContain('rpz-');
      expect(listed, format).not.toMatch(/\.example|\.local/);
      expect(listed, format).toContain('phish-canary.com');
      expect(text, format).toContain('4 with an rpz- label (RPZ triggers, not names), 2 outside a delegated top-level domain');
      expect(summary, format).toContain('4 with an rpz- label (RPZ triggers, not names), 2 outside a delegated top-level domain');
    }
    const metamask = JSON.parse((await exported(dbPath, 'metamask')).text) as { blacklist: string[] };
    expect(metamask.blacklist).toEqual(['phish-canary.com']);
    const suricata = entries((await exported(dbPath, 'suricata')).text, '#').map((line) => Buffer.from(line, 'base64').toString('utf8'));
    expect(suricata).toEqual(['phish-canary.com']);
  });

  it.skipIf(skipWithout(['unbound', 'dig']))('an RPZ exported from trigger-shaped contents leaves Unbound answering unrelated names; it answered NXDOMAIN to every query before', async () => {
    const dbPath = await mirrorOf([...TRIGGERS, threat('https://phish-canary.com/')]);
    const zoneFile = join(tempDir(), 'threats.rpz');
    writeFileSync(zoneFile, (await exported(dbPath, 'rpz')).text);
    const unbound = await resolverOver(zoneFile, ['phish-canary.com', 'www.phish-canary.com', 'unrelated-bank.com', 'example.org']);
    expect(await unbound.blocks('phish-canary.com')).toBe(true);
    expect(await unbound.blocks('www.phish-canary.com')).toBe(true);
    // With `1.0.0.0.0.rpz-client-ip CNAME .` loaded, every query from 127.0.0.1 (in 0.0.0.0/1) was NXDOMAIN.
    for (const unrelated of ['unrelated-bank.com', 'example.org']) {
      expect(await unbound.resolves(unrelated, '192.0.2.10'), unrelated).toBe(true);
    }
  });
});

describe('one view of the host, the browser\'s (issue 32 item 2)', () => {
  const BACKSLASH = threat('http://phish-site.com\\@bank-brand.com/');
  const HOST_BLOCKS = [threat('https://bank-brand.com@phish-two.com/'), threat('http:\\\\phish-three.com\\')];

  it('a backslash before @ never makes a list block the victim, and lookups agree with the browser', async () => {
    const dbPath = await mirrorOf([BACKSLASH, ...HOST_BLOCKS]);
    for (const [format, comment] of [['domains', '#'], ['hosts', '#'], ['adguard', '!'], ['rpz', ';']] as const) {
      const listed = entries((await exported(dbPath, format)).text, comment).join('\n');
      expect(listed, format).not.toContain('bank-brand.com');
      expect(listed, format).toContain('phish-two.com');
      expect(listed, format).toContain('phish-three.com');
    }
    expect((JSON.parse((await exported(dbPath, 'metamask')).text) as { blacklist: string[] }).blacklist).toEqual(['phish-three.com', 'phish-two.com']);

    const victim = await runCli(['lookup', 'https://bank-brand.com/login'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect(victim.code, victim.stdout).toBe(1);
    expect(victim.stdout).toContain('https://bank-brand.com/login: not blocked');
    // What a browser opens for the threat's URL: host phish-site.com, path /@bank-brand.com/.
    const phisher = await runCli(['lookup', 'http://phish-site.com/@bank-brand.com/'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect(phisher.code, phisher.stdout).toBe(0);
    expect(phisher.stdout).toContain('(by expression phish-site.com/@bank-brand.com/)');
  });

  it('a mirror written under the old rules answers as a fresh one after its next start: its rows are derived again, only those that change move in the feed', async () => {
    const service = await serveThreats(KEY, NOW, [BACKSLASH, ...HOST_BLOCKS]);
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // The file as a version before the fix left it: the victim's host in the row's lookup columns,
    // and no record of the rules they follow.
    withWritableDb(dbPath, (db) => {
      db.prepare("UPDATE threats SET host = 'bank-brand.com', registrable_domain = 'bank-brand.com', url_expression = 'bank-brand.com/' WHERE id = ?").run(BACKSLASH.id);
      db.prepare("DELETE FROM mirror_settings WHERE key LIKE 'lookup_rules%'").run();
    });
    expect((await runCli(['lookup', 'https://bank-brand.com/login'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(0);
    const feedBefore = scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');

    const next = await runCli(['--once'], env(service, dbPath));
    expect(next.code).toBe(0);
    expect(next.logs.find((line) => String(line.msg).startsWith('derived the lookup columns again'))).toMatchObject({ threats: 3, changed: 1 });
    expect((await runCli(['lookup', 'https://bank-brand.com/login'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(1);
    expect((await runCli(['lookup', 'http://phish-site.com/@bank-brand.com/'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(0);
    expect(scalar(dbPath, 'SELECT id FROM threats WHERE change_seq > ?', feedBefore)).toBe(BACKSLASH.id);
    expect(scalar(dbPath, 'SELECT count(*) FROM threats WHERE change_seq > ?', feedBefore)).toBe(1);
    expect(scalar(dbPath, "SELECT value FROM mirror_settings WHERE key = 'lookup_rules'")).toBe(String(LOOKUP_RULES_VERSION));
    // Once is enough: the start after it derives nothing.
    const again = await runCli(['--once'], env(service, dbPath));
    expect(again.logs.some((line) => String(line.msg).startsWith('derived the lookup columns again'))).toBe(false);
  });

  it("derives again, at the next start, rows whose contents are far larger than the writer's heap holds at once", async () => {
    const service = await serveThreats(KEY, NOW, Array.from({ length: 100 }, (_, index) => threat(`https://big-${index}.example/`)));
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // 100 contents of 1,000,000 characters (100 MB together; the writer's heap is 16 MB), as a file
    // an earlier version wrote them, with no record of the lookup rules they follow.
    withWritableDb(dbPath, (db) => {
      db.exec("UPDATE threats SET content = 'https://big-' || id || '.example/' || hex(zeroblob(500000)) || '/'");
      db.exec("DELETE FROM mirror_settings WHERE key LIKE 'lookup_rules%'");
    });
    const next = await runCli(['--once'], env(service, dbPath));
    expect(next.code, next.stderr).toBe(0);
    expect(next.logs.find((line) => String(line.msg).startsWith('derived the lookup columns again'))).toMatchObject({ threats: 100, changed: 100 });
  });

  it.skipIf(skipWithout(['unbound', 'dig']))('Unbound loading the RPZ blocks the phishing hosts and answers the victim', async () => {
    const dbPath = await mirrorOf([BACKSLASH, ...HOST_BLOCKS]);
    const zoneFile = join(tempDir(), 'threats.rpz');
    writeFileSync(zoneFile, (await exported(dbPath, 'rpz')).text);
    const unbound = await resolverOver(zoneFile, ['phish-two.com', 'phish-three.com', 'bank-brand.com']);
    expect(await unbound.blocks('phish-two.com')).toBe(true);
    expect(await unbound.blocks('phish-three.com')).toBe(true);
    expect(await unbound.resolves('bank-brand.com', '192.0.2.10')).toBe(true);
  });
});
