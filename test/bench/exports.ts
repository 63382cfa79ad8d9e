// `node dist/test/bench/exports.js [--threats N]`: time and peak memory of each export format over
// a mirror of N current threats (default 1,000,000). The mirror is written straight into a migrated
// file (this measures the export, not the sync): 40% URLs that block a whole host (each its own
// host: the worst case for the host lists), 30% path-level URLs, 15% addresses, 15% e-mails.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openWritableMirror } from '../support/writable-mirror.js';
import { EXPORT_FORMATS } from '../../src/config/export-formats.js';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';
import { measure } from './measure.js';

const { values } = parseArgs({ options: { threats: { type: 'string', default: '1000000' } } });
const count = Number(values.threats);
/** The compiled CLI beside this compiled script (dist/test/bench → dist/bin). */
const CLI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'threat-mirror-bench-exports-'));
const dbPath = join(dir, 'mirror.db');

function contentOf(index: number): [string, string] {
  const roll = index % 20;
  if (roll < 8) return ['URL', `https://login-${index.toString(36)}.brand-${index % 97}.example/`];
  if (roll < 14) return ['URL', `https://shared-host-${index % 50}.example/forms/${index.toString(36)}?id=${index}`];
  if (roll < 17) return ['ADDRESS', `eip155:1:0x${index.toString(16).padStart(40, '0')}`];
  return ['EMAIL', `support${index}@brand-${index % 97}.example`];
}

const started = performance.now();
const opened = await openWritableMirror(dbPath);
const stamp = new Date('2026-11-01T00:00:00.000Z').toISOString();
const insertThreat = opened.sqlite.prepare(
  `INSERT INTO threats (id, content, type, blocked_at, first_seen_at, updated_at, change_seq, host, registrable_domain,
     address_namespace, address_chain, address, email, email_domain) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insertLink = opened.sqlite.prepare('INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES (?, ?, ?)');
const insertBatch = opened.sqlite.transaction((from: number, to: number) => {
  for (let index = from; index < to; index += 1) {
    const [type, content] = contentOf(index);
    const fields = deriveLookupFields(type, content);
    insertThreat.run(index + 1, content, type, stamp, stamp, stamp, index + 1, fields.host, fields.registrableDomain,
      fields.addressNamespace, fields.addressChain, fields.address, fields.email, fields.emailDomain);
    insertLink.run(index % 3 === 0 ? 'globex' : 'acme', index + 1, stamp);
  }
});
for (let from = 0; from < count; from += 10_000) insertBatch(from, Math.min(count, from + 10_000));
opened.close();
console.log(`mirror of ${count} threats written in ${((performance.now() - started) / 1000).toFixed(1)} s (${(statSync(dbPath).size / 1e6).toFixed(0)} MB)`);

console.log('| format | seconds | peak RSS MB | output MB | summary |');
console.log('|---|---:|---:|---:|---|');
for (const format of EXPORT_FORMATS) {
  const out = join(dir, `export.${format}`);
  const result = await measure(CLI_PATH, ['export', '--format', format, '--out', out], { THREAT_MIRROR_DB: dbPath });
  const summary = result.stderr.trim().replace(/^threat-mirror export: /, '').replace(/; written to .*$/, '');
  const size = result.code === 0 ? (statSync(out).size / 1e6).toFixed(1) : `exit ${result.code}`;
  console.log(`| ${format} | ${(result.ms / 1000).toFixed(2)} | ${result.peakRssMb.toFixed(0)} | ${size} | ${summary.slice(0, 90)} |`);
}
rmSync(dir, { recursive: true, force: true });
