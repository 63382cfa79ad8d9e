// `npm run bench:allowlist [-- --threats N] [--mirror FILE]`: what THREAT_MIRROR_ALLOWLIST costs
// over a mirror of N current threats (default 1,000,000; export-mirror.ts): exports with and without
// a list of 100 entries of every kind, the daemon's export index built with and without it, the
// index brought to a new version of the list (the pass over every current threat), lookups with and
// without it, and the view enforced_threats read whole by the sqlite3 shell against current_threats.
// Numbers, not assertions; the load average is printed, as wall times are only as good as it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readAllowlist } from '../../src/allowlist/allowlist-file.js';
import { AllowMatcher } from '../../src/allowlist/allow-matcher.js';
import { ThreatLookup } from '../../src/lookup/threat-lookup.js';
import { Database } from '../../src/db/sqlite.js';
import { ExportIndex } from '../../src/export/index/export-index.js';
import { zoneTimersFor } from '../../src/lib/rpz-zone.js';
import { benchThreat, writeBenchMirror } from './export-mirror.js';
import { measure } from './measure.js';

const { values } = parseArgs({ options: { threats: { type: 'string', default: '1000000' }, mirror: { type: 'string' } } });
const count = Number(values.threats);
const CLI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'threat-mirror-bench-allowlist-'));
const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');
const seconds = (ms: number): string => (ms / 1000).toFixed(2);

/** 100 entries over the mirror's threats: 60 whole hosts, 20 paths on shared hosts, 10 addresses, 10 e-mails. */
function allowlistLines(salt: number): string[] {
  const lines: string[] = [];
  for (let index = salt; lines.length < 100; index += Math.floor(count / 150) + 1) {
    const [type, content] = benchThreat(index % count);
    const roll = lines.length;
    if (roll < 60 && type === 'URL' && content.endsWith('/')) lines.push(`${new URL(content).hostname} # host ${roll}`);
    else if (roll >= 60 && roll < 80 && type === 'URL' && content.includes('/forms/')) lines.push(content.replace(/\?.*$/, ''));
    else if (roll >= 80 && roll < 90 && type === 'ADDRESS') lines.push(content);
    else if (roll >= 90 && type === 'EMAIL') lines.push(content);
  }
  return lines;
}

console.log(`load average at start: ${load()}`);
let dbPath = values.mirror;
if (dbPath === undefined) {
  dbPath = join(dir, 'mirror.db');
  const started = performance.now();
  writeBenchMirror(dbPath, count);
  console.log(`mirror of ${count} threats written in ${seconds(performance.now() - started)} s`);
}
const first = join(dir, 'allow-1.txt');
const second = join(dir, 'allow-2.txt');
writeFileSync(first, `${allowlistLines(7).join('\n')}\n`);
writeFileSync(second, `${allowlistLines(13).join('\n')}\n`);

console.log('\n| export | without | with 100 entries | summary with |\n|---|---:|---:|---|');
for (const format of ['csv', 'stix', 'rpz', 'domains']) {
  const out = join(dir, `export.${format}`);
  const without = await measure(CLI_PATH, ['export', '--format', format, '--out', out], { THREAT_MIRROR_DB: dbPath });
  rmSync(out, { force: true });
  const withList = await measure(CLI_PATH, ['export', '--format', format, '--out', out], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: first });
  rmSync(out, { force: true });
  const allowed = /(\d+) allowed locally/.exec(withList.stderr)?.[1] ?? `exit ${withList.code}`;
  console.log(`| ${format} | ${seconds(without.ms)} s, ${without.peakRssMb.toFixed(0)} MB | ${seconds(withList.ms)} s, ${withList.peakRssMb.toFixed(0)} MB | ${allowed} allowed locally |`);
}

const listA = readAllowlist(first).list;
const listB = readAllowlist(second).list;
const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const result = await run();
  return [result, performance.now() - started];
};
const [plain, plainMs] = await timed(() => ExportIndex.create(dbPath, join(dir, 'index-plain.db'), { nowMs: Date.now(), timers: zoneTimersFor(3600) }));
plain.close();
const [index, buildMs] = await timed(() => ExportIndex.create(dbPath, join(dir, 'index.db'), { allowlist: listA, nowMs: Date.now(), timers: zoneTimersFor(3600) }));
const [change, changeMs] = await timed(() => index.refresh(listB, Date.now()));
const [, sameMs] = await timed(() => index.refresh(listB, Date.now()));
console.log('\n| export index | ms |\n|---|---:|');
console.log(`| built without an allowlist | ${plainMs.toFixed(0)} |`);
console.log(`| built with 100 entries | ${buildMs.toFixed(0)} |`);
console.log(`| brought to another list of 100 (zone ${change.zoneChanged ? 'changed' : 'unchanged'}, ${change.threatsRead} threats re-read) | ${changeMs.toFixed(0)} |`);
console.log(`| refresh with nothing new | ${sameMs.toFixed(1)} |`);
index.close();

const sqlite = new Database(dbPath, { readonly: true });
const lookup = new ThreatLookup(sqlite);
const probes = Array.from({ length: 2_000 }, (_, index) => benchThreat((index * 7919) % count)[1]);
for (const [label, matcher] of [['without', undefined], ['with 100 entries', new AllowMatcher(listA.entries)]] as const) {
  for (const value of probes.slice(0, 200)) lookup.lookup(value, { allowlist: matcher });
  const started = performance.now();
  for (const value of probes) lookup.lookup(value, { allowlist: matcher });
  console.log(`lookup ${label}: ${(((performance.now() - started) * 1000) / probes.length).toFixed(1)} µs a value (${probes.length} values)`);
}
sqlite.close();

const sqlite3 = spawnSync('sh', ['-c', 'command -v sqlite3'], { encoding: 'utf8' }).stdout.trim();
if (sqlite3 !== '') {
  const withTable = join(dir, 'view.db');
  spawnSync(sqlite3, [dbPath, `VACUUM INTO '${withTable}'`]);
  const writable = new Database(withTable);
  const [{ AllowlistRows }, { MirrorSettings }] = await Promise.all([import('../../src/db/sql/allowlist-rows.js'), import('../../src/db/sql/settings.js')]);
  writable.transaction(() => new AllowlistRows(writable, new MirrorSettings(writable)).mirror({ ...listA, appliedAt: new Date().toISOString() }, new Date().toISOString()))();
  writable.close();
  console.log('\n| sqlite3 shell | seconds | rows |\n|---|---:|---:|');
  for (const view of ['current_threats', 'enforced_threats']) {
    const started = performance.now();
    const rows = spawnSync(sqlite3, [withTable, `SELECT count(*) FROM ${view}`], { encoding: 'utf8' }).stdout.trim();
    console.log(`| count(*) FROM ${view} | ${seconds(performance.now() - started)} | ${rows} |`);
  }
}
console.log(`\nload average at the end: ${load()}`);
rmSync(dir, { recursive: true, force: true });
