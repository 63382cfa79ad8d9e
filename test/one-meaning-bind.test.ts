// Issue 37: a real BIND loads the daemon's zone built from hostile contents and an allowlist of a
// third of their hosts. BIND refuses a whole transfer holding two records at one owner ("multiple
// RRs of singleton type") and then enforces nothing: before, one hostile spelling of an allowed host
// was enough. The same contents answered over /v1/lookup in their hostile spellings. The judge is
// BIND itself: its SOA serial (the zone loaded) and its RPZ signal (the SOA of the policy zone in
// the additional section of an answer it rewrote), as test/support/secondaries.ts proves a block.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowlist } from '../src/allowlist/allowlist-entries.js';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { startStandin } from '../src/standin/index.js';
import { CliProcess, runCli, servingPort } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { listedHosts } from './support/host-lists.js';
import { mirrorEnvFor } from './support/service.js';
import { allowlistLinesFor, hostileHostBlock, hostileUrl, PROPERTY_SEED } from './support/hostile-urls.js';
import { dig, freePort, type Secondary, startBind, stopAll, ZONE } from './support/secondaries.js';
import { until } from './support/until.js';
import { recordsOf, serialOf } from './support/zone-records.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-bind-key';

/** 300 generated hostile contents (seeded), and the review's own spellings of an allowed host. */
const CONTENTS = [
  ...fc.sample(fc.oneof(hostileUrl, hostileHostBlock), { seed: PROPERTY_SEED, numRuns: 300 }),
  'http:customer-portal.com',
  '\u0001https://customer-portal.com/',
  `https://customer-portal.com/#${'f'.repeat(5_000)}`,
];
const THREATS: StandinThreat[] = CONTENTS.map((content, index) => ({ id: 37_100_000 + index, content, type: 'URL', blockedAt: `${TODAY}T08:${String(index % 60).padStart(2, '0')}:00.000Z`, organization: 'acme' }));
/** A third of the hosts, in the spellings users write, and the docs' own example line; lines the file would refuse left out. */
const ALLOWLIST = [...allowlistLinesFor(CONTENTS, 1, ['HOST', 'https://HOST/', 'http:HOST']), 'customer-portal.com   # ticket 4411'].filter((line) => {
  try {
    parseAllowlist('allow.txt', [line]);
    return true;
  } catch {
    return false;
  }
});

let standin: Standin;
let daemon: CliProcess;
let env: Record<string, string>;
let dir: string;
let httpPort: number;
let dnsPort: number;
const secondaries: Secondary[] = [];

describe.skipIf(skipWithout(['named', 'dig']))('BIND loads the zone of hostile contents and an allowlist', () => {
  beforeAll(async () => {
    // The file's own folder, removed by stopAll: tempDir() would go after the first test.
    dir = mkdtempSync(join(tmpdir(), 'threat-mirror-bind-'));
    writeFileSync(join(dir, 'allow.txt'), `${ALLOWLIST.join('\n')}\n`);
    standin = await startStandin({ threats: THREATS, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    dnsPort = await freePort();
    const bindPort = await freePort();
    env = mirrorEnvFor(KEY, NOW)(standin, join(dir, 'mirror.db'), {
      THREAT_MIRROR_INITIAL_DAYS: '2',
      THREAT_MIRROR_HTTP_PORT: '0',
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
      THREAT_MIRROR_DNS_NOTIFY: `127.0.0.1:${bindPort}`,
      THREAT_MIRROR_ALLOWLIST: join(dir, 'allow.txt'),
      LOG_LEVEL: 'info',
    });
    daemon = new CliProcess([], env);
    httpPort = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'zone changed' && Number(line.hosts) > 0);
    secondaries.push(await startBind(join(dir, 'bind'), dnsPort, bindPort));
  }, 60_000);

  afterAll(() => stopAll({ secondaries, daemon, standin, dir }));

  it('BIND transfers the zone (AXFR) and serves it: blocked hosts and their subdomains blocked, allowed hosts let through', async () => {
    const bind = secondaries[0] as Secondary;
    const rpz = await runCli(['export', '--format', 'rpz'], env);
    expect(rpz.code, rpz.stderr).toBe(0);
    const blocked = listedHosts('rpz', rpz.stdout);
    const passthru = rpz.stdout.split('\n').filter((line) => /^[^*;$@].* CNAME rpz-passthru\.$/.test(line)).map((line) => line.split(' ')[0] as string);
    expect(blocked.length).toBeGreaterThan(20);
    expect(passthru).toContain('customer-portal.com');
    expect(passthru.length).toBeGreaterThan(5);
    const serial = serialOf(recordsOf(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).text));
    // Loaded: BIND answers the zone's SOA with the daemon's serial (a refused transfer leaves it none).
    await until('BIND serves the transferred zone', () => new RegExp(`\\sSOA\\s.*\\s${serial}\\s`).test(dig(['@127.0.0.1', '-p', String(bind.port), ZONE, 'SOA']).text), 30_000);
    for (const host of blocked.slice(0, 25)) {
      expect(await bind.blocks(host), host).toBe(true);
      // A label no generated host has: no passthru name is at or under it.
      expect(await bind.blocks(`tm-sub-37.${host}`), `tm-sub-37.${host}`).toBe(true);
    }
    for (const host of passthru) expect(await bind.blocks(host), host).toBe(false);
  }, 90_000);

  it('/v1/lookup answers the hostile spellings of a blocked host blocked, and the allowed host not blocked', async () => {
    const domains = await runCli(['export', '--format', 'domains'], env);
    expect(domains.code, domains.stderr).toBe(0);
    const host = listedHosts('domains', domains.stdout)[0] as string;
    const values = [`http:${host}/x`, `\u0001https://${host}/x`, `http:\t//${host}/x`, `ht\ttps://${host}/x`, `https://tm-sub-37.${host}/`, 'https://customer-portal.com/login'];
    const response = await fetch(`http://127.0.0.1:${httpPort}/v1/lookup`, { method: 'POST', body: JSON.stringify({ values }) });
    expect(response.status).toBe(200);
    const answers = ((await response.json()) as { results: Array<{ value: string; blocked: boolean }> }).results.map((result) => result.blocked);
    expect(answers, `${host}: ${JSON.stringify(values)}`).toEqual([true, true, true, true, true, false]);
  });
});
