// Every SQL block of the README and docs/ runs, as written, in the sqlite3 shell against a mirror
// written by a real sync: readers copy these queries, so none may name a column that is not there.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateReports, generateThreats, type Standin, type StandinProposal, startStandin } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { mirrorEnvFor } from './support/service.js';
import { tempDbPath } from './support/temp.js';


const ROOT = join(import.meta.dirname, '..');
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);

interface SqlBlock {
  readonly file: string;
  readonly line: number;
  readonly sql: string;
}

/** The ```sql blocks of README.md and docs/*.md, with where each starts. */
function documentedSql(): SqlBlock[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];
  const blocks: SqlBlock[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let index = 0; index < lines.length; index += 1) {
      if (lines[index]?.trim() !== '```sql') continue;
      const start = index + 1;
      while (index + 1 < lines.length && lines[index + 1]?.trim() !== '```') index += 1;
      blocks.push({ file, line: start + 1, sql: lines.slice(start, index + 1).join('\n') });
      index += 1;
    }
  }
  return blocks;
}

const sqlite3 = !skipWithout(['sqlite3']);
let standin: Standin | undefined;
let folder = '';
let dbPath = '';

beforeAll(async () => {
  if (!sqlite3) return;
  const threats = generateThreats({ seed: 61, organizations: ['acme'], count: 600, fromDay: addDays(TODAY, -9), toDay: TODAY });
  standin = await startStandin({
    threats,
    reports: generateReports({ seed: 62, organizations: ['acme'], count: 60, fromDay: addDays(TODAY, -9), toDay: TODAY, threats }),
    keys: { organizationKeys: { 'acme-key': 'acme' }, userKeys: {} },
    now: () => new Date(NOW),
  });
  // Not tempDir(): that removes its folders after each test, and this file is shared by the tests.
  folder = mkdtempSync(join(tmpdir(), 'threat-mirror-sql-'));
  dbPath = join(folder, 'mirror.db');
  const result = await runCli(['--once'], mirrorEnvFor('acme-key', NOW)(standin, dbPath, {
    THREAT_MIRROR_INITIAL_DAYS: '10',
    THREAT_MIRROR_REPORTS: '1',
  }));
  expect(result.code).toBe(0);
});

afterAll(async () => {
  await standin?.close();
  if (folder !== '') rmSync(folder, { recursive: true, force: true });
});

describe('documented SQL', () => {
  const blocks = documentedSql();

  it('finds the SQL blocks of the README and docs/', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.skipIf(!sqlite3)('runs every block in the sqlite3 shell, read-only, without an error', () => {
    for (const block of blocks) {
      // -bail: stop at the first error; parameters a reader would bind (:last) are NULL here.
      const run = spawnSync('sqlite3', ['-readonly', '-bail', dbPath], { input: block.sql, encoding: 'utf8' });
      expect({ where: `${block.file}:${block.line}`, status: run.status, stderr: run.stderr }).toEqual({ where: `${block.file}:${block.line}`, status: 0, stderr: '' });
    }
  });
});

describe('the documented query of rejected proposals', () => {
  it.skipIf(!sqlite3)('says an asset is blocked only when it is a current threat of that organization', async () => {
    const query = documentedSql().find((block) => block.file === join('docs', 'schema.md') && block.sql.includes('FROM rejected_proposals'));
    expect(query).toBeDefined();
    const threat = (id: number, content: string, organization: string) => ({ id, content, type: 'URL', blockedAt: `${TODAY}T08:00:00.000Z`, organization });
    const proposal = (id: number, content: string): StandinProposal => ({ id, reviewStatus: 'REJECTED', asset: { id: id * 7, type: 'URL', content, status: 'ACTIVE' } });
    const service = await startStandin({
      threats: [threat(1, 'https://current.example/', 'acme'), threat(2, 'https://unblocked.example/', 'acme'), threat(3, 'https://globex-only.example/', 'globex')],
      reports: [
        {
          id: 900,
          organization: 'acme',
          createdAt: `${TODAY}T09:00:00.000Z`,
          status: 'REJECTED',
          title: 'four assets',
          proposals: [proposal(1, 'https://current.example/'), proposal(2, 'https://unblocked.example/'), proposal(3, 'https://globex-only.example/'), proposal(4, 'https://never.example/')],
        },
      ],
      keys: { organizationKeys: { 'acme-key': 'acme', 'globex-key': 'globex' }, userKeys: {} },
      now: () => new Date(NOW),
    });
    try {
      const mirrorPath = tempDbPath();
      const env = mirrorEnvFor({ acme: 'acme-key', globex: 'globex-key' }, NOW)(service, mirrorPath, { THREAT_MIRROR_INITIAL_DAYS: '3', THREAT_MIRROR_REPORTS: '1' });
      expect((await runCli(['--once'], env)).code).toBe(0);
      service.removeThreats([2]); // unblocked: today is re-scanned, so the next run marks it removed
      expect((await runCli(['--once'], env)).code).toBe(0);
      const run = spawnSync('sqlite3', ['-readonly', '-bail', '-json', mirrorPath], { input: query?.sql, encoding: 'utf8' });
      expect(run.stderr).toBe('');
      const rows = (JSON.parse(run.stdout) as Array<Record<string, unknown>>).map((row) => Object.values(row));
      // report_id, asset_content, and the documented answer to "is it blocked for us now?"
      expect(rows.map(([, content, blocked]) => [content, blocked]).sort()).toEqual([
        ['https://current.example/', 1],
        ['https://globex-only.example/', 0],
        ['https://never.example/', 0],
        ['https://unblocked.example/', 0],
      ]);
    } finally {
      await service.close();
    }
  });
});

