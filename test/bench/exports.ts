// `npm run bench:exports [-- --threats N] [--mirror FILE] [--no-dns]`: each export format's time,
// CPU and peak RSS over a mirror of N current threats (default 1,000,000; the mirror is written
// straight into a migrated file, export-mirror.ts, or an existing one is reused with --mirror);
// the sqlite3 shell reading the same rows, as the floor; then the full zone's AXFR to a real BIND
// and the IXFR of a 100-threat change (zone-transfer.ts). Not part of `npm test`: numbers, not
// assertions. The load average is printed before and after: on a shared machine, wall times are
// only as good as it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EXPORT_FORMATS } from '../../src/config/export-formats.js';
import { writeBenchMirror } from './export-mirror.js';
import { measure } from './measure.js';
import { bindPath, measureTransfers } from './zone-transfer.js';

const { values } = parseArgs({ options: { threats: { type: 'string', default: '1000000' }, mirror: { type: 'string' }, 'no-dns': { type: 'boolean', default: false } } });
const count = Number(values.threats);
/** The compiled CLI beside this compiled script (dist/test/bench → dist/bin). */
const CLI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'threat-mirror-bench-exports-'));
const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');

/** What the exports read, as the sqlite3 shell prints it to /dev/null: the floor of reading those rows at all. */
const FLOOR_QUERIES: Record<string, string> = {
  'csv, jsonl (15 columns, organizations grouped)': `SELECT t.id, t.content, t.type, t.blocked_at, t.first_seen_at, t.updated_at, t.change_seq, t.host, t.registrable_domain,
    t.address_namespace, t.address_chain, t.address, t.email, t.email_domain, group_concat(o.organization, ',')
    FROM threats t JOIN organization_threats o ON o.threat_id = t.id WHERE o.removed_at IS NULL GROUP BY t.id ORDER BY t.id`,
  'stix (8 columns)': `SELECT t.id, t.content, t.type, t.blocked_at, t.first_seen_at, t.updated_at, t.change_seq, t.email FROM threats t
    WHERE EXISTS (SELECT 1 FROM organization_threats o WHERE o.threat_id = t.id AND o.removed_at IS NULL) ORDER BY t.id`,
  'host formats (type, content of URL/PAGE)': `SELECT t.type, t.content FROM threats t WHERE t.type IN ('URL', 'PAGE')
    AND EXISTS (SELECT 1 FROM organization_threats o WHERE o.threat_id = t.id AND o.removed_at IS NULL)`,
};

console.log(`load average at start: ${load()}`);
let dbPath = values.mirror;
if (dbPath === undefined) {
  dbPath = join(dir, 'mirror.db');
  const started = performance.now();
  writeBenchMirror(dbPath, count);
  console.log(`mirror of ${count} threats written in ${((performance.now() - started) / 1000).toFixed(1)} s (${(statSync(dbPath).size / 1e6).toFixed(0)} MB)`);
}

const sqlite3 = spawnSync('sh', ['-c', 'command -v sqlite3'], { encoding: 'utf8' }).stdout.trim();
if (sqlite3 !== '') {
  console.log('\n| sqlite3 shell reading | seconds |\n|---|---:|');
  for (const [what, query] of Object.entries(FLOOR_QUERIES)) {
    const started = performance.now();
    spawnSync(sqlite3, [dbPath, query], { stdio: ['ignore', 'ignore', 'inherit'] });
    console.log(`| ${what} | ${((performance.now() - started) / 1000).toFixed(2)} |`);
  }
}

console.log('\n| format | seconds | CPU seconds | peak RSS MB | output MB | summary |');
console.log('|---|---:|---:|---:|---:|---|');
for (const format of EXPORT_FORMATS) {
  const out = join(dir, `export.${format}`);
  const result = await measure(CLI_PATH, ['export', '--format', format, '--out', out], { THREAT_MIRROR_DB: dbPath });
  const summary = result.stderr.trim().replace(/^threat-mirror export: /, '').replace(/; written to .*$/, '');
  const size = result.code === 0 ? (statSync(out).size / 1e6).toFixed(1) : `exit ${result.code}`;
  console.log(`| ${format} | ${(result.ms / 1000).toFixed(2)} | ${(result.cpuMs / 1000).toFixed(2)} | ${result.peakRssMb.toFixed(0)} | ${size} | ${summary.slice(0, 90)} |`);
  rmSync(out, { force: true });
}
console.log(`load average after the exports: ${load()}`);

if (values['no-dns']) {
  // skipped on request
} else if (bindPath() === undefined || !existsSync(bindPath() as string)) {
  console.log('\nzone transfers: skipped, named (Debian package bind9) is not installed');
} else {
  const figures = await measureTransfers(dbPath, dir, count);
  console.log('\n| zone | figure |\n|---|---|');
  console.log(`| export index built from the mirror (refresh job) | ${(figures.indexBuildMs / 1000).toFixed(2)} s, ${figures.zoneHosts} hosts |`);
  console.log(`| AXFR of the full zone to BIND | ${figures.axfr.records} records in ${(figures.axfr.primaryMs / 1000).toFixed(2)} s (primary); BIND: ${figures.axfr.bind} |`);
  console.log(`| index refresh after a 100-threat change | ${figures.change.refreshMs.toFixed(0)} ms (${figures.change.threatsRead} threats read) |`);
  console.log(`| IXFR of that change to BIND | ${figures.ixfr.records} records in ${figures.ixfr.primaryMs.toFixed(1)} ms (primary); NOTIFY to BIND's transfer done: ${figures.ixfr.notifyToLoadedMs.toFixed(0)} ms; BIND: ${figures.ixfr.bind} |`);
  console.log(`load average at the end: ${load()}`);
}
rmSync(dir, { recursive: true, force: true });
