// `export` renders CSV, JSONL and STIX, and selects the host formats' hosts, in blocks of rows on
// two threads (src/export/parallel-render.ts). Judged against the one-thread code on the same
// mirror (what the daemon's files and feeds use), byte for byte, headers and their counts
// included: a mirror of ~9,000 threats (several blocks each side, hostile contents, host blocks,
// removed threats between them, two organizations), to a file, to stdout and for one organization.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readAllowlist } from '../src/allowlist/allowlist-file.js';
import { AllowMatcher } from '../src/allowlist/allow-matcher.js';
import { openWritableMirrorSync } from './support/writable-mirror.js';
import { Database } from '../src/db/sqlite.js';
import { buildExport } from '../src/export/build-export.js';
import type { ExportFormat } from '../src/config/export-formats.js';
import { ThreatSnapshot } from '../src/export/current-threats.js';
import { writeExportStream } from '../src/export/write-export.js';
import { generateThreats } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { withWritableDb } from './support/mirror-db.js';
import { tempDir } from './support/temp.js';
import { threatRowWriter } from './support/threat-rows.js';

const STAMP = '2026-03-15T12:00:00.000Z';

/** ~9,000 current threats written as the page writer would; every 7th removed, every 5th of both organizations. */
function writeMirror(dbPath: string): void {
  const threats = generateThreats({ seed: 29, organizations: ['acme', 'globex'], count: 9_500, fromDay: '2026-03-01', toDay: '2026-03-15', hostile: true });
  const opened = openWritableMirrorSync(dbPath);
  const { sqlite } = opened;
  try {
    const insertThreat = threatRowWriter(sqlite);
    const link = sqlite.prepare('INSERT INTO organization_threats (organization, threat_id, first_seen_at, removed_at) VALUES (?, ?, ?, ?)');
    sqlite.transaction(() => {
      for (const [index, threat] of threats.entries()) {
        insertThreat({ id: threat.id, content: threat.content, type: threat.type, blockedAt: threat.blockedAt, stamp: STAMP, changeSeq: index + 1 });
        link.run(threat.organization, threat.id, STAMP, index % 7 === 3 ? STAMP : null);
        if (index % 5 === 0) link.run(threat.organization === 'acme' ? 'globex' : 'acme', threat.id, STAMP, null);
      }
    })();
  } finally {
    opened.close();
  }
}

/** The export as one thread renders it, in this process. */
async function oneThread(dbPath: string, format: ExportFormat, organization?: string, allowlist?: string): Promise<Buffer> {
  const sqlite = new Database(dbPath, { readonly: true, fileMustExist: true });
  const snapshot = new ThreatSnapshot(sqlite, organization, allowlist === undefined ? undefined : new AllowMatcher(readAllowlist(allowlist).list.entries));
  try {
    const built = await buildExport(snapshot, { format, organization });
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (chunk: Buffer) => chunks.push(chunk));
    await writeExportStream(sink, built);
    sink.end();
    return Buffer.concat(chunks);
  } finally {
    snapshot.close();
    sqlite.close();
  }
}

const MIRROR_MOVES = fileURLToPath(new URL('./support/mirror-moves.mjs', import.meta.url));

describe('export of record formats on two threads', () => {
  it('gives the bytes one thread gives, record and host formats, to a file, to stdout and for one organization', async () => {
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    writeMirror(dbPath);
    const current = (): number => {
      const db = new Database(dbPath, { readonly: true });
      try {
        return db.prepare('SELECT count(DISTINCT threat_id) FROM organization_threats WHERE removed_at IS NULL').pluck().get() as number;
      } finally {
        db.close();
      }
    };
    // Several blocks of 2,000 on each thread.
    expect(current()).toBeGreaterThan(8_000);
    const env = { THREAT_MIRROR_DB: dbPath };
    for (const format of ['csv', 'jsonl', 'stix'] as const) {
      const out = join(dir, `export.${format}`);
      const written = await runCli(['export', '--format', format, '--out', out], env);
      expect(written.code, written.stderr).toBe(0);
      const expected = await oneThread(dbPath, format);
      expect(readFileSync(out).equals(expected), `${format} to a file`).toBe(true);
    }
    const stdout = await runCli(['export', '--format', 'jsonl'], env);
    expect(stdout.code, stdout.stderr).toBe(0);
    expect(stdout.stdout).toBe((await oneThread(dbPath, 'jsonl')).toString('utf8'));
    expect(stdout.stderr).toMatch(new RegExp(`jsonl: ${current()} threats`));

    for (const format of ['domains', 'rpz', 'metamask', 'suricata'] as const) {
      const exported = await runCli(['export', '--format', format], env);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout, format).toBe((await oneThread(dbPath, format)).toString('utf8'));
    }
    expect((await runCli(['export', '--format', 'domains'], env)).stdout.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length).toBeGreaterThan(500);
    const globexHosts = await runCli(['export', '--format', 'hosts', '--org', 'globex'], env);
    expect(globexHosts.stdout).toBe((await oneThread(dbPath, 'hosts', 'globex')).toString('utf8'));

    const globex = join(dir, 'globex.stix');
    expect((await runCli(['export', '--format', 'stix', '--org', 'globex', '--out', globex], env)).code).toBe(0);
    expect(readFileSync(globex).equals(await oneThread(dbPath, 'stix', 'globex'))).toBe(true);
  });

  it('with THREAT_MIRROR_ALLOWLIST, the helper leaves out and counts what this thread does (issue 31)', async () => {
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    writeMirror(dbPath);
    // Entries of each kind, taken from threats of blocks on both threads (ids sorted: blocks of 2,000 alternate).
    const pick = (type: string, column: string): string[] =>
      withWritableDb(dbPath, (db) => db.prepare(`SELECT ${column} FROM threats WHERE type = ? AND ${column} IS NOT NULL ORDER BY id`).pluck().all(type) as string[]).filter((_, index, all) => index % Math.ceil(all.length / 6) === 0);
    const hosts = pick('URL', "substr(url_expression, 1, instr(url_expression, '/') - 1)").filter((host) => /[a-z]/.test(host) && host.includes('.'));
    const entries = [...hosts, ...pick('ADDRESS', 'address'), ...pick('EMAIL', 'email'), ...pick('PLATFORM_02', 'content').filter((content) => !/^\s|\s$|[#\u0000-\u001f\u007f-\u009f]|^(?:\*\.|\|\||@@)/.test(content))];
    const allowlist = join(dir, 'allow.txt');
    writeFileSync(allowlist, `${entries.join('\n')}\n`);
    const env = { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist };
    for (const format of ['csv', 'stix', 'domains', 'rpz'] as const) {
      const exported = await runCli(['export', '--format', format], env);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout === (await oneThread(dbPath, format, undefined, allowlist)).toString('utf8'), format).toBe(true);
      const allowed = Number(/(\d+) allowed locally/.exec(exported.stderr)?.[1]);
      expect(allowed, `${format}: ${exported.stderr}`).toBeGreaterThanOrEqual(15);
    }
  });

  it('gives the snapshot it started from when the mirror changes before the helper reads it: the helper steps aside', async () => {
    const dbPath = join(tempDir(), 'mirror.db');
    writeMirror(dbPath);
    // As while a daemon runs: WAL, so that a writer commits while the export reads.
    withWritableDb(dbPath, (db) => db.pragma('journal_mode = WAL'));
    const expected = await oneThread(dbPath, 'jsonl');
    // The main thread's snapshot is taken before the helper starts; the helper finds another one.
    const exported = await runCli(['export', '--format', 'jsonl'], { THREAT_MIRROR_DB: dbPath, NODE_OPTIONS: `--import=${MIRROR_MOVES}`, MOVE_MIRROR_DB: dbPath });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain('mirror moved');
    expect(exported.stdout === expected.toString('utf8'), 'the export mixes two versions of the mirror').toBe(true);
    expect(exported.stdout).not.toContain('#moved');
  });
});
